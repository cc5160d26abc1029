// The image cache end to end: a real control plane, a real site agent and emulated machines
// running the REAL ramdisk agent. A pool's pre-warm image is pulled once from its HTTPS
// origin, reported in the heartbeat and becomes an image_locations row (ready); an image
// whose bytes do not match never becomes a copy, and the failure names it; a deploy's pin
// reaches the agent as a pinned digest it caches too; a ramdisk booted with if.cache streams
// deploy.image from the cache (no request at the origin) and falls back to the source when
// the cache misses (one request at the origin). A sanboot entry waits (503, sleep, chain
// again) until its ISO is named and cached verified, then gets `sanboot --no-describe` of a
// grant URL that serves that ISO only, with ranges. media.insert of a catalog ISO inserts the
// site's cached copy as Redfish virtual media; on IPMI (no virtual media, ipmi_sim) it waits
// for the cache and sanboots it; media.eject undoes either.
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from '../../agent/emulator/fleet';
import type { SiteAgent } from '../../agent/site/main';
import { registerImage } from '../../services/images/catalog';
import { pinImageAtSite } from '../../core/images/site-cache-report';
import { addImageSigner } from '../../services/images/signers';
import { imageSigningInput } from '../../core/images/signing-input';
import { newId } from '../../services/ids';
import type { ProvisionResult } from '../../core/plan';
import type { AgentCommandInput } from '../../workflows/agent-command';
import { activeAgent, enrollMachine, startBootSite, until, type BootSite } from '../helpers/boot-site';
import { startIpmiSim, type RunningIpmiSim } from '../helpers/ipmi-sim';
import { siteAgentFixture } from '../helpers/site-agent';
import { makeServerCertificate } from '../helpers/tls';
import { sessionQueue } from '../helpers/provision';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const signer = generateKeyPairSync('ed25519');
const served = new Map<string, Buffer>();
const fetches = new Map<string, number>();
let site: BootSite;
let agent: SiteAgent;
let fleet: Fleet;
let origin: https.Server;
let originUrl: string;
let caPem: string;

const warm = gzipSync(randomBytes(2 * 1024 * 1024 + 17));
const cold = gzipSync(randomBytes(1024 * 1024 + 5));
const pinnedBytes = randomBytes(300_000);

async function register(ref: string, body: Buffer, options: { servedAs?: Buffer; iso?: boolean } = {}): Promise<{ id: string; sha256: string; path: string }> {
  const name = `/${ref.replace('@', '-')}${options.iso ? '.iso' : '.raw.gz'}`;
  served.set(name, options.servedAs ?? body);
  const kind = options.iso
    ? { kind: 'iso' as const, format: 'iso' as const, compression: 'none' as const }
    : { kind: 'os' as const, format: 'raw' as const, compression: 'gzip' as const };
  const input = { tenantId: 'root', ref, ...kind, sha256: sha(body), sizeBytes: body.length, source: `${originUrl}${name}` };
  const signature = sign(null, imageSigningInput(input), signer.privateKey).toString('base64');
  const { image } = await registerImage(site.t.cp.db, { ...input, signerId: 'cache-platform', signature });
  return { id: image.id, sha256: input.sha256, path: name };
}

async function prewarm(refs: string[]): Promise<void> {
  const { db } = site.t.cp;
  const existing = await db.pool.findFirst({ where: { siteId: site.siteId } });
  if (existing) await db.pool.update({ where: { id: existing.id }, data: { policy: { prewarmImages: refs } } });
  else await db.pool.create({ data: { id: newId('pool'), tenantId: 'root', siteId: site.siteId, class: 'metal-host', policy: { prewarmImages: refs } } });
}

beforeAll(async () => {
  site = await startBootSite('image-cache-site');
  const tls = makeServerCertificate(mkdtempSync(path.join(site.t.config.dataDir, 'tls-')), 'images.cache');
  caPem = tls.caPem;
  origin = https.createServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, (req, res) => {
    const body = served.get(req.url ?? '');
    fetches.set(req.url ?? '', (fetches.get(req.url ?? '') ?? 0) + 1);
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
  originUrl = `https://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const caFile = path.join(site.t.config.dataDir, 'mirror-ca.pem');
  writeFileSync(caFile, caPem);
  agent = await siteAgentFixture(site.t.cp.url, { boot: [`cache_ca_file = ${JSON.stringify(caFile)}`] }).start({ IRONFLOW_JOIN_TOKEN: site.siteToken });
  await activeAgent(agent);
  await addImageSigner(site.t.cp.db, {
    tenantId: 'root',
    id: 'cache-platform',
    publicKeyPem: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  });
  fleet = await Fleet.start({
    dataDir: `${site.t.config.dataDir}/fleet`,
    bootServerUrl: () => agent.bootServer?.url,
    sleepScale: 0.05,
    ramdiskTrustedCaPems: [caPem],
  });
}, 120_000);

afterAll(async () => {
  await fleet?.close();
  await agent?.stop();
  origin?.closeAllConnections();
  origin?.close();
  await site?.t.close();
});

const cache = () => agent.bootServer?.cache as NonNullable<SiteAgent['bootServer']>['cache'];
const location = (imageId: string) => site.t.cp.db.imageLocation.findUnique({ where: { imageId_siteId: { imageId, siteId: site.siteId } } });

describe('the site image cache', () => {
  let warmImage: { id: string; sha256: string; path: string };

  it('pulls a pre-warm image once, reports it, and the control plane records a ready image_location', async () => {
    warmImage = await register('cache-warm@1', warm);
    await prewarm(['cache-warm@1']);
    await until('the image_location to be ready', async () => (await location(warmImage.id))?.state === 'ready', 40_000);
    expect(cache().store.has(warmImage.sha256)).toBe(true);
    expect(fetches.get(warmImage.path)).toBe(1);
    const reports = await site.t.cp.db.nodeImageCache.findMany({ where: { nodeId: agent.identity.current.nodeId } });
    expect(reports.map((r) => ({ sha256: r.sha256, state: r.state, sizeBytes: Number(r.sizeBytes) }))).toEqual([
      { sha256: warmImage.sha256, state: 'ready', sizeBytes: warm.length },
    ]);
    expect(Number((await location(warmImage.id))?.sizeBytes)).toBe(warm.length);
    expect(cache().report().status.state).toBe('READY');
  }, 60_000);

  it('never makes a copy of bytes that do not match; the failure names the image', async () => {
    const liar = await register('cache-liar@1', randomBytes(1000), { servedAs: randomBytes(1000) });
    await prewarm(['cache-warm@1', 'cache-liar@1']);
    const event = await until(
      'the failure event',
      async () => (await site.t.cp.db.event.findFirst({ where: { type: 'site.cache.failed', subjectId: agent.identity.current.nodeId } })) ?? undefined,
      40_000,
    );
    expect((event.data as { message: string }).message).toContain(`${originUrl}${liar.path}`);
    expect((event.data as { message: string }).message).toContain(liar.sha256);
    expect(cache().report().status).toMatchObject({ state: 'FAILED' });
    // Operators see it in sites get, on the agent.
    const shown = async () =>
      (
        await site.t.root.call<{ agents: Array<{ nodeId: string; siteStatus: { state: string; message: string } | null }> }>(
          'GET',
          `/v1/sites/${site.siteId}?tenantId=root`,
        )
      ).agents.find((a) => a.nodeId === agent.identity.current.nodeId)?.siteStatus;
    const failed = await until(
      'sites get to show the failed site section',
      async () => ((await shown())?.state === 'FAILED' ? await shown() : undefined),
      20_000,
    );
    expect(failed?.message).toContain(liar.sha256);
    expect(cache().store.has(liar.sha256)).toBe(false);
    expect((await location(liar.id))?.state).toBe('failed');
    await prewarm(['cache-warm@1']);
    await until('the site section to be ready again', () => cache().report().status.state === 'READY', 20_000);
    await until('sites get to show it ready again', async () => (await shown())?.state === 'READY', 20_000);
  }, 60_000);

  it('a deploy pin reaches the agent as a pinned digest, which it caches and spares', async () => {
    const pinned = await register('cache-pinned@1', pinnedBytes);
    await pinImageAtSite(site.t.cp.db, { imageId: pinned.id, siteId: site.siteId, sizeBytes: pinnedBytes.length });
    await until('the agent to see the pin', () => agent.session.state().pinnedImages.includes(pinned.sha256), 20_000);
    await until('the pinned image to be cached', () => cache().store.has(pinned.sha256), 20_000);
    expect(cache().puller.protectedDigests().has(pinned.sha256)).toBe(true);
    await until('the image_location to be ready', async () => (await location(pinned.id))?.state === 'ready', 20_000);
  }, 60_000);

  it('a ramdisk booted with if.cache deploys from the cache, and from the source when the cache misses', async () => {
    await site.t.root.call('POST', '/v1/profiles', {
      tenantId: 'root',
      document: { id: 'cache-boot', version: 1, target: 'metal', steps: [{ use: 'metal.ensureRamdisk', timeout: '3m' }], cleanup: [] },
    });
    const added = await fleet.add({ diskBytes: 8 * 1024 * 1024 });
    const nodeId = await enrollMachine(site, added.machine, added.bmc);
    const started = await site.t.root.call<{ workflowId: string }>('POST', '/v1/profiles/cache-boot/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'commissioning',
    });
    const result = (await site.t.cp.temporal.workflow.getHandle(started.workflowId).result()) as ProvisionResult;
    expect(result.history.map((h) => `${h.use}:${h.outcome}`)).toEqual(['metal.ensureRamdisk:succeeded']);

    const deploy = async (source: string, sha256: string) => {
      const command: AgentCommandInput = {
        taskQueue: await sessionQueue(site.t.cp.db, nodeId),
        activity: 'deploy.image',
        input: {
          workflowId: `test:${nodeId}`,
          stepKey: 'steps[0]',
          use: 'deploy.image',
          with: { source, sha256, compression: 'gzip' },
          target: { tenantId: 'root', nodeId, siteId: site.siteId, provisionState: 'deploying', labels: {} },
        },
        timeoutMs: 60_000,
      };
      return (await site.t.cp.temporal.workflow.execute('agentCommand', {
        taskQueue: site.t.config.controlQueue,
        workflowId: `test:${nodeId}:deploy:${randomBytes(3).toString('hex')}`,
        args: [command],
      })) as { sha256: string; fetchedFrom: string };
    };

    const before = fetches.get(warmImage.path);
    expect(await deploy(`${originUrl}${warmImage.path}`, warmImage.sha256)).toMatchObject({ sha256: warmImage.sha256, fetchedFrom: 'cache' });
    expect(fetches.get(warmImage.path)).toBe(before); // not one request at the origin

    const coldPath = '/cache-cold.raw.gz';
    served.set(coldPath, cold);
    expect(await deploy(`${originUrl}${coldPath}`, sha(cold))).toMatchObject({ sha256: sha(cold), fetchedFrom: 'source' });
    expect(fetches.get(coldPath)).toBe(1);
  }, 120_000);

  it('a sanboot entry waits until its ISO is named and cached, then sanboots it from a grant URL with ranges', async () => {
    const isoBytes = randomBytes(400_000);
    const iso = await register('cache-iso@1', isoBytes, { iso: true });
    const mac = '02:00:00:00:0c:01';
    const workflowId = `test:sanboot:${randomBytes(3).toString('hex')}`;
    const nodeId = newId('node');
    const prepare: AgentCommandInput = {
      taskQueue: agent.identity.current.temporal.taskQueue,
      activity: 'boot.prepareRamdisk',
      input: {
        workflowId,
        stepKey: 'steps[0]',
        use: 'boot.prepareRamdisk',
        with: {
          entries: [
            { mac, productUuid: null, arch: 'BIOS', nodeId, workflowId, sanbootSha256: iso.sha256, notAfter: new Date(Date.now() + 3_600_000).toISOString() },
          ],
        },
        target: { tenantId: 'root', nodeId, siteId: site.siteId, provisionState: 'commissioning', labels: {} },
      },
      timeoutMs: 30_000,
    };
    await site.t.cp.temporal.workflow.execute('agentCommand', { taskQueue: site.t.config.controlQueue, workflowId: `${workflowId}:prepare`, args: [prepare] });
    const get = (url: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
        http
          .get(url, { headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });
    const base = agent.bootServer?.url as string;

    // Not named by the site, not cached: the machine waits and asks again, never the ramdisk.
    const waiting = await get(`${base}/boot/ipxe?mac=${mac}`);
    expect(waiting.status).toBe(503);
    expect(waiting.body.toString()).toBe(`#!ipxe\necho this machine's ISO is not in the site cache yet\nsleep 30\nchain ${base}/boot/ipxe?mac=${mac}\n`);

    // The site section fails naming the entry while its ISO is not named.
    const sanbootEntry = {
      mac,
      productUuid: null,
      arch: 'BIOS' as const,
      nodeId,
      workflowId,
      sanbootSha256: iso.sha256,
      notAfter: new Date(Date.now() + 60_000).toISOString(),
    };
    expect(cache().report([sanbootEntry]).status).toEqual({
      state: 'FAILED',
      message: `boot entry ${mac} (workflow ${workflowId}) sanboots ${iso.sha256}, which the site does not name as an iso cache image`,
    });

    // media.insert pins the ISO at the site: it is named (format iso), pulled and verified.
    await pinImageAtSite(site.t.cp.db, { imageId: iso.id, siteId: site.siteId, sizeBytes: isoBytes.length });
    await until(
      'the ISO to be cached',
      () => cache().store.has(iso.sha256) && agent.session.state().cacheImages.some((i) => i.sha256 === iso.sha256 && i.format === 'iso'),
      20_000,
    );
    expect(cache().report([sanbootEntry]).status.state).not.toBe('FAILED');
    const script = (await get(`${base}/boot/ipxe?mac=${mac}`)).body.toString();
    const match = new RegExp(`^#!ipxe\\nsanboot --no-describe (${base}/cache/t/([0-9a-f]{32})/${iso.sha256})\\n$`).exec(script);
    expect(match, script).not.toBeNull();
    const [, url, grant] = match as unknown as [string, string, string];
    expect(script).not.toContain('if.'); // no token, no parameters: the ISO boots as it is
    const head = await get(url, { range: 'bytes=0-2047' });
    expect(head.status).toBe(206);
    expect(head.body.equals(isoBytes.subarray(0, 2048))).toBe(true);
    // That grant serves that ISO only.
    expect(
      (
        await get(
          `${base}/cache/t/${grant}/${
            cache()
              .store.list()
              .find((c) => c.sha256 !== iso.sha256)?.sha256
          }`,
        )
      ).status,
    ).toBe(404);
  }, 60_000);

  async function runProfile(id: string, nodeId: string, steps: unknown[]): Promise<ProvisionResult> {
    await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: { id, version: 1, target: 'metal', steps, cleanup: [] } });
    const started = await site.t.root.call<{ workflowId: string }>('POST', `/v1/profiles/${id}/runs`, {
      tenantId: 'root',
      nodeId,
      provisionState: 'commissioning',
    });
    return (await site.t.cp.temporal.workflow.getHandle(started.workflowId).result()) as ProvisionResult;
  }
  const fetchBytes = (url: string) =>
    new Promise<Buffer>((resolve, reject) => {
      http
        .get(url, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks)));
        })
        .on('error', reject);
    });

  it('media.insert of a cached catalog ISO inserts the site cache copy as Redfish virtual media; media.eject ejects it', async () => {
    const isoBytes = served.get('/cache-iso-1.iso') as Buffer;
    const added = await fleet.add({ diskBytes: 1024 * 1024 });
    const nodeId = await enrollMachine(site, added.machine, added.bmc);
    const bmcMachine = fleet.bmc.get(added.bmc.address.split('/').pop() as string);
    const inserted = await runProfile('media-redfish', nodeId, [{ use: 'media.insert', with: { image: 'cache-iso@1' } }]);
    expect(inserted.outputs['steps[0]']).toMatchObject({ via: 'virtual-media', sha256: sha(isoBytes) });
    expect(bmcMachine?.mediaInserted).toBe(true);
    expect(bmcMachine?.mediaImage).toMatch(new RegExp(`^${agent.bootServer?.url}/cache/t/[0-9a-f]{32}/${sha(isoBytes)}$`));
    expect((await fetchBytes(bmcMachine?.mediaImage as string)).equals(isoBytes)).toBe(true); // what the BMC reads
    const ejected = await runProfile('media-redfish-eject', nodeId, [{ use: 'media.eject', on: 'site' }]);
    expect(ejected.outputs['steps[0]']).toMatchObject({ ejected: true });
    expect(bmcMachine?.mediaInserted).toBe(false);
  }, 90_000);

  it('on IPMI (no virtual media) media.insert waits for the site cache, then sanboots the ISO; media.eject removes the entry', async () => {
    let sim: RunningIpmiSim | undefined;
    try {
      sim = await startIpmiSim();
      const isoBytes = randomBytes(250_000);
      const iso = await register('cache-iso-ipmi@1', isoBytes, { iso: true });
      const mac = '02:00:00:00:0c:02';
      const nodeId = newId('node');
      const bmcCredentialsRef = await site.t.cp.secrets.put(site.t.cp.db, {
        tenantId: 'root',
        purpose: 'bmc-credentials',
        value: JSON.stringify({ username: sim.username, password: sim.password }),
      });
      await site.t.cp.db.node.create({
        data: {
          id: nodeId,
          tenantId: 'root',
          siteId: site.siteId,
          role: 'host',
          bmcDriver: 'ipmi',
          bmcAddress: sim.address,
          bmcCredentialsRef,
          macs: [mac],
          arch: 'x86_64',
          uefi: false,
          power: 'off',
        },
      });
      const before = fetches.get(iso.path) ?? 0;

      const inserted = await runProfile('media-ipmi', nodeId, [{ use: 'media.insert', with: { image: 'cache-iso-ipmi@1' }, timeout: '2m' }]);
      expect(inserted.outputs['steps[0]']).toMatchObject({ via: 'sanboot', sha256: iso.sha256, macs: [mac] });
      expect(fetches.get(iso.path)).toBe(before + 1); // pulled once, by the site cache
      expect(sim.chassis('boot')).toBe('pxe'); // the next boot is the network's: the sanboot
      const script = (await fetchBytes(`${agent.bootServer?.url}/boot/ipxe?mac=${mac}`)).toString();
      const url = /^#!ipxe\nsanboot --no-describe (\S+)\n$/.exec(script)?.[1];
      expect(url, script).toBeDefined();
      expect((await fetchBytes(url as string)).equals(isoBytes)).toBe(true);

      const ejected = await runProfile('media-ipmi-eject', nodeId, [{ use: 'media.eject', on: 'site' }]);
      expect(ejected.outputs['steps[0]']).toMatchObject({ ejected: false, sanbootEntriesRemoved: [mac] });
      const after = await new Promise<number>((resolve, reject) =>
        http
          .get(`${agent.bootServer?.url}/boot/ipxe?mac=${mac}`, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on('error', reject),
      );
      expect(after).toBe(404);
    } finally {
      await sim?.close();
    }
  }, 120_000);
});
