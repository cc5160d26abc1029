// TFTP: our server (agent/boot/tftp) against tftpd-hpa on loopback, serving the same copies
// of Debian's iPXE builds (undionly.kpxe, snponly.efi, ipxe.efi) to the same client: one curl
// process that fetches the three in turn at blksize 1468. Rounds alternate which server goes
// first; the number is the median wall time of a round per server, and the ratio is
// tftpd-hpa's time over ours (above 1: ours is faster). A second scenario runs 8 such curl
// processes at once, each from its own loopback address.
// Run: npx tsx bench/tftp.ts [rounds=30]
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTftpServer } from '../agent/boot/tftp/server';
import { AgentLog } from '../agent/common/log';
import { stopChild } from '../test/helpers/child-process';
import { freePort } from '../test/helpers/ports';
import { alternate, median, requireTool, run } from './peer-compare';

const rounds = Number(process.argv[2] ?? 30);
const BUILDS = ['undionly.kpxe', 'snponly.efi', 'ipxe.efi'];
const TFTPD = '/usr/sbin/in.tftpd';

await requireTool('curl', ['--version'], 'apt-get install -y curl');
await requireTool(TFTPD, ['-V'], 'apt-get install -y tftpd-hpa');

// Both servers get the same root: copies, since Debian's ipxe.efi is a symlink out of
// /usr/lib/ipxe that neither our jail nor tftpd-hpa's chroot follows.
const root = mkdtempSync(path.join(os.tmpdir(), 'tftp-bench-root-'));
chmodSync(root, 0o755);
for (const name of BUILDS) {
  copyFileSync(realpathSync(`/usr/lib/ipxe/${name}`), path.join(root, name));
  chmodSync(path.join(root, name), 0o644);
}
const totalBytes = BUILDS.reduce((sum, name) => sum + readFileSync(path.join(root, name)).length, 0);
const out = mkdtempSync(path.join(os.tmpdir(), 'tftp-bench-out-'));

const ours = await startTftpServer({ address: '127.0.0.1', port: 0, root, state: () => ({ active: true }), log: new AgentLog(() => undefined) });
const peerPort = await freePort();
const peer = spawn(TFTPD, ['-L', '-s', root, '-a', `127.0.0.1:${peerPort}`], { stdio: 'ignore' });

async function fetchAll(port: number, client: number): Promise<void> {
  // Each client from its own loopback address: the server allows 4 transfers per source.
  const args = ['-sS', '--tftp-blksize', '1468', '--interface', `127.0.0.${10 + client}`];
  for (const name of BUILDS) args.push('-o', path.join(out, `${client}-${name}`), `tftp://127.0.0.1:${port}/${name}`);
  await run('curl', args);
}

function verify(clients: number): void {
  for (let client = 0; client < clients; client++) {
    for (const name of BUILDS) {
      if (!readFileSync(path.join(out, `${client}-${name}`)).equals(readFileSync(path.join(root, name)))) throw new Error(`${name} differs`);
    }
  }
}

async function timed(port: number, clients: number): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, (_, client) => fetchAll(port, client)));
  const ms = performance.now() - started;
  verify(clients);
  return ms;
}

try {
  for (let i = 0; i < 50; i++) {
    if (
      await fetchAll(peerPort, 0).then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await fetchAll(ours.port, 0); // warm both
  for (const clients of [1, 8]) {
    const result = await alternate(
      rounds,
      () => timed(ours.port, clients),
      () => timed(peerPort, clients),
    );
    const oursMs = median(result.ours);
    const peerMs = median(result.peer);
    console.log(
      JSON.stringify({
        scenario: `${clients} curl process(es), each fetching the 3 builds (${totalBytes} bytes) at blksize 1468`,
        rounds,
        oursMedianMs: Number(oursMs.toFixed(1)),
        tftpdHpaMedianMs: Number(peerMs.toFixed(1)),
        ratio: Number((peerMs / oursMs).toFixed(2)),
      }),
    );
  }
} finally {
  await ours.close();
  await stopChild(peer);
  rmSync(root, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
}
