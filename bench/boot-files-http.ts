// A 1 GiB file from our boot HTTP server (agent/boot/http, streaming from disk) against nginx
// with sendfile, on loopback, the same bytes from the page cache and the same client (curl to
// /dev/null): once as GET /boot/files/<name>, once as a cached image under a grant
// (GET /cache/t/<grant>/<sha256>, the copy ingested into a real ImageCacheStore). Rounds
// alternate which server goes first; the number is the median throughput per server, and the
// ratio is ours over nginx's.
// Run: npx tsx bench/boot-files-http.ts [rounds=7]
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { cachePath, cacheRoute } from '../agent/boot/http/cache-route';
import { filesRoute } from '../agent/boot/http/files-route';
import { CacheGrants } from '../agent/cache/grants';
import { ImageCacheStore } from '../agent/cache/store';
import { startBootHttpServer } from '../agent/boot/http/server';
import { AgentLog } from '../agent/common/log';
import { stopChild } from '../test/helpers/child-process';
import { freePort } from '../test/helpers/ports';
import { alternate, median, requireTool, run } from './peer-compare';

const rounds = Number(process.argv[2] ?? 7);
const NGINX = '/usr/sbin/nginx';
const FILE_BYTES = 1024 ** 3;

await requireTool('curl', ['--version'], 'apt-get install -y curl');
await requireTool(NGINX, ['-v'], 'apt-get install -y nginx-light');

const dir = mkdtempSync(path.join(os.tmpdir(), 'boot-files-bench-'));
chmodSync(dir, 0o755);
const filesDir = path.join(dir, 'files');
mkdirSync(filesDir, { mode: 0o755 });
const file = path.join(filesDir, 'big.img');
const fd = openSync(file, 'w', 0o644);
const block = randomBytes(1024 * 1024);
for (let i = 0; i < FILE_BYTES / block.length; i++) writeSync(fd, block);
closeSync(fd);

const sha256 = createHash('sha256');
for await (const chunk of createReadStream(file)) sha256.update(chunk as Buffer);
const digest = sha256.digest('hex');
const store = new ImageCacheStore(path.join(dir, 'cache'));
await store.ingest(digest, createReadStream(file));
const grants = new CacheGrants();
const grant = grants.firmwareGrant(digest);
const log = new AgentLog(() => undefined);
const ours = await startBootHttpServer({
  address: '127.0.0.1',
  port: 0,
  routes: [filesRoute({ filesDir, tftpRoot: filesDir }), cacheRoute({ store, grants, holdsLease: () => true, log })],
  log,
});
const nginxPort = await freePort();
const conf = path.join(dir, 'nginx.conf');
writeFileSync(
  conf,
  `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${nginxPort};
    location /boot/files/ { alias ${filesDir}/; }
  }
}
`,
);
const nginx = spawn(NGINX, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: 'inherit' });

/** Bytes per second of one whole-file GET, as curl measures it. */
async function download(url: string): Promise<number> {
  const { stdout } = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', url]);
  const [status, size, seconds] = stdout.trim().split(' ');
  if (status !== '200' || Number(size) !== FILE_BYTES) throw new Error(`${url}: ${stdout}`);
  return FILE_BYTES / Number(seconds);
}

try {
  const nginxUrl = `http://127.0.0.1:${nginxPort}/boot/files/big.img`;
  const oursUrl = `${ours.url}/boot/files/big.img`;
  for (let i = 0; i < 50; i++) {
    if (
      await download(nginxUrl).then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await download(oursUrl);
  const mib = (bytesPerSecond: number) => Number((bytesPerSecond / 1024 ** 2).toFixed(0));
  const cacheUrl = `${ours.url}${cachePath(grant, digest)}`;
  await download(cacheUrl);
  for (const [scenario, url] of [
    ['1 GiB /boot/files, one curl to /dev/null', oursUrl],
    ['1 GiB cached image under a grant, one curl to /dev/null', cacheUrl],
  ] as const) {
    const result = await alternate(
      rounds,
      () => download(url),
      () => download(nginxUrl),
    );
    console.log(
      JSON.stringify({
        scenario,
        rounds,
        oursMedianMiBps: mib(median(result.ours)),
        nginxMedianMiBps: mib(median(result.peer)),
        ratio: Number((median(result.ours) / median(result.peer)).toFixed(2)),
        ours: result.ours.map(mib),
        nginx: result.peer.map(mib),
      }),
    );
  }
} finally {
  await ours.close();
  await stopChild(nginx);
  rmSync(dir, { recursive: true, force: true });
}
