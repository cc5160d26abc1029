// How many bytes an image's origin sends when a fleet deploys it, with the site image cache
// and without. Each site runs the real cache (agent/cache: puller, verified store, grants)
// behind the real boot HTTP server and its /cache route; each machine runs the ramdisk's real
// deploy.image step (digest checked on the stream) onto its own disk file, with if.cache set
// to its site's cache under a boot grant, or without it (the peer: every machine pulls from
// the source). The origin counts the bytes it sends.
//
//   npx tsx bench/cache-origin-bytes.ts [--machines 100] [--sites 2] [--mib 8] [--concurrency 10]
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cacheRoute } from '../agent/boot/http/cache-route';
import { startBootHttpServer, type BootHttpServer } from '../agent/boot/http/server';
import { SiteImageCache } from '../agent/cache';
import type { RamdiskHardware } from '../agent/ramdisk/hardware';
import { deployImageStep } from '../agent/ramdisk/steps/deploy-image';
import { ControlPlaneClient } from '../agent/common/control-plane-client';
import { AgentLog } from '../agent/common/log';

const { values } = parseArgs({
  options: {
    machines: { type: 'string', default: '100' },
    sites: { type: 'string', default: '2' },
    mib: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '10' },
  },
});
const machines = Number(values.machines);
const sites = Number(values.sites);
const imageBytes = Number(values.mib) * 1024 * 1024;
const concurrency = Number(values.concurrency);

const log = new AgentLog(() => undefined);
const work = mkdtempSync(path.join(tmpdir(), 'bench-cache-'));
const image = randomBytes(imageBytes);
const sha256 = createHash('sha256').update(image).digest('hex');

let originBytes = 0;
let originRequests = 0;
const origin = http.createServer((req, res) => {
  if (req.url !== '/image.raw') return void res.writeHead(404).end();
  originRequests += 1;
  originBytes += image.length;
  res.writeHead(200, { 'content-length': image.length }).end(image);
});
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
const source = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/image.raw`;

interface Site {
  cache: SiteImageCache;
  server: BootHttpServer;
}

async function startSite(n: number): Promise<Site> {
  const cache = new SiteImageCache({ dir: path.join(work, `site-${n}`, 'cache'), log });
  const server = await startBootHttpServer({
    address: '127.0.0.1',
    port: 0,
    routes: [cacheRoute({ store: cache.store, grants: cache.grants, holdsLease: () => true, log })],
    log,
  });
  // The site's pre-warm list names the image (a pool's prewarmImages).
  cache.want([{ url: source, sha256, format: 'raw' }], []);
  await cache.puller.idle();
  return { cache, server };
}

function machineDeps(n: number, cacheUrl: string | undefined) {
  const diskPath = path.join(work, `disk-${n}`);
  writeFileSync(diskPath, Buffer.alloc(0));
  const hardware: RamdiskHardware = {
    system: { productUuid: null, vendor: 'bench', model: 'bench', serial: String(n), arch: 'x86_64', uefi: true, cpus: 1, memoryBytes: 1 },
    nics: [],
    disks: [{ name: 'vda', path: diskPath, sizeBytes: imageBytes * 2 }],
    gpus: [],
    loadKexec: () => Promise.reject(new Error('this machine does not kexec')),
  };
  return {
    nodeId: `node_bench${n}`,
    key: generateKeyPairSync('ed25519').privateKey,
    certificatePem: () => '',
    hardware,
    client: new ControlPlaneClient('http://127.0.0.1:9'),
    log,
    heartbeat: () => undefined,
    ...(cacheUrl ? { cacheUrl } : {}),
  };
}

async function deployFleet(siteList: Site[] | undefined): Promise<{ originBytes: number; originRequests: number; fromCache: number; wallMs: number }> {
  originBytes = 0;
  originRequests = 0;
  const started = performance.now();
  const sitesReady = siteList ?? [];
  if (siteList) for (let s = 0; s < sites; s++) sitesReady[s] = await startSite(s);
  let fromCache = 0;
  let next = 0;
  const worker = async () => {
    while (next < machines) {
      const n = next++;
      const site = sitesReady[n % sites];
      const notAfter = new Date(Date.now() + 3_600_000).toISOString();
      const cacheUrl = site
        ? `${site.server.url}/cache/t/${site.cache.grants.bootGrant({ mac: `02:00:00:00:${(n >> 8).toString(16).padStart(2, '0')}:${(n & 255).toString(16).padStart(2, '0')}`, workflowId: `wf-${n}`, notAfter })}`
        : undefined;
      const answer = (await deployImageStep(machineDeps(n, cacheUrl))({
        workflowId: `wf-${n}`,
        stepKey: 'steps[0]',
        use: 'deploy.image',
        with: { source, sha256 },
        target: { tenantId: 'root', nodeId: `node_bench${n}`, siteId: `site-${n % sites}`, provisionState: 'deploying', labels: {} },
      })) as { sha256: string; fetchedFrom: string };
      if (answer.sha256 !== sha256) throw new Error(`machine ${n} wrote ${answer.sha256}`);
      if (answer.fetchedFrom === 'cache') fromCache += 1;
      rmSync(path.join(work, `disk-${n}`));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { originBytes, originRequests, fromCache, wallMs: performance.now() - started };
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const withCache: Site[] = [];
const cached = await deployFleet(withCache);
const direct = await deployFleet(undefined);
for (const site of withCache) await site.server.close();
origin.close();
rmSync(work, { recursive: true, force: true });

console.log(`${machines} machines, ${sites} sites, one ${mib(imageBytes)} image, ${concurrency} deploys at a time`);
console.log(
  `with the cache:    origin sent ${mib(cached.originBytes)} in ${cached.originRequests} requests; ${cached.fromCache}/${machines} deploys read the cache; ${(cached.wallMs / 1000).toFixed(1)} s (pre-warm included)`,
);
console.log(`without (sources): origin sent ${mib(direct.originBytes)} in ${direct.originRequests} requests; ${(direct.wallMs / 1000).toFixed(1)} s`);
console.log(
  `| ${new Date().toISOString().slice(0, 10)} | ${machines} × ${mib(imageBytes)}, ${sites} sites | ${mib(cached.originBytes)} (${cached.originRequests} GETs) | ${mib(direct.originBytes)} (${direct.originRequests} GETs) | ${(direct.originBytes / Math.max(1, cached.originBytes)).toFixed(0)}× | ${(cached.wallMs / 1000).toFixed(1)} / ${(direct.wallMs / 1000).toFixed(1)} s |`,
);
