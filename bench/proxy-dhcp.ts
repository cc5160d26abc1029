// Proxy DHCP against dnsmasq in proxy mode (`dhcp-range=…,proxy`), the same client load on
// each, in the same run, inside network namespaces (test/helpers/netns.ts, 10.77.68.0/24):
//   1. rate: a closed loop of --concurrency outstanding PXE DISCOVERs (BIOS, arch 0) over
//      --macs machines that all have a boot entry (dnsmasq: a dhcp-host tag each), for
//      --seconds; answers/s and latency p50/p99;
//   2. burst: --burst machines with an entry and --unknown without send one DISCOVER each at
//      random moments within --window seconds; every known machine must be answered exactly
//      once and no unknown one (dnsmasq: `pxe-service=tag:known,…`).
// Both servers log one line per answer (ours: JSON on stderr; dnsmasq: its default DHCP log).
//
// Each of --rounds rounds runs both servers, in turn first (the machine is shared: the order
// and the neighbours' load move numbers by several percent).
//
//   npx tsx bench/proxy-dhcp.ts [--seconds 10] [--concurrency 16] [--macs 1000] [--burst 500] [--unknown 100] [--window 10] [--rounds 2]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BootEntryStore } from '../agent/boot/entries';
import type { BootEntry } from '../core/boot/boot-entry';
import { stopChild } from '../test/helpers/child-process';
import { createTestNetwork, type NetworkHost, type TestNetwork } from '../test/helpers/netns';
import { spawnLineChild } from '../test/helpers/proxy-dhcp-net';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    macs: { type: 'string', default: '1000' },
    burst: { type: 'string', default: '500' },
    unknown: { type: 'string', default: '100' },
    window: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
  },
});
const SUBNET = '10.77.68';
const SERVER_IP = `${SUBNET}.2`;
const DNSMASQ = '/usr/sbin/dnsmasq';

const macOf = (prefix: number, i: number) =>
  `52:54:00:${prefix.toString(16)}:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;
const known = Array.from({ length: Math.max(Number(values.macs), Number(values.burst)) }, (_, i) => macOf(0x68, i));
const unknown = Array.from({ length: Number(values.unknown) }, (_, i) => macOf(0x69, i));
const entryFor = (mac: string): BootEntry => ({
  mac,
  productUuid: null,
  arch: 'BIOS',
  nodeId: 'node_bench',
  workflowId: 'wf_bench',
  tokenRef: 'sec_bench',
  notAfter: new Date(Date.now() + 3_600_000).toISOString(),
});

interface Server {
  name: string;
  start(network: TestNetwork, host: NetworkHost, dir: string): Promise<() => Promise<void>>;
}

const ours: Server = {
  name: 'ironflow proxy DHCP',
  async start(network, host, dir) {
    const dataDir = mkdtempSync(path.join(dir, 'agent-'));
    // Too many for a command line: the store's file carries them.
    new BootEntryStore(dataDir).put(known.map(entryFor));
    const server = spawnLineChild(network, host.ns, [
      'test/fixtures/proxy-dhcp-server.ts',
      JSON.stringify({ dataDir, serverIp: SERVER_IP, active: true, httpBaseUrl: `http://${SERVER_IP}:8081`, entries: [] }),
    ]);
    await server.nextLine((line) => line === 'ready');
    return () => stopChild(server.child);
  },
};

const dnsmasq: Server = {
  name: `dnsmasq ${execFileSync(DNSMASQ, ['--version'], { encoding: 'utf8' })
    .split('\n')[0]
    ?.replace(/^Dnsmasq version (\S+).*/, '$1')} (proxy)`,
  async start(network, host, dir) {
    const conf = path.join(dir, 'dnsmasq.conf');
    writeFileSync(
      conf,
      [
        'port=0',
        `interface=${host.interface}`,
        'bind-interfaces',
        `dhcp-range=${SUBNET}.0,proxy`,
        'pxe-service=tag:entry,x86PC,"Network boot",undionly',
        `dhcp-leasefile=${path.join(dir, 'dnsmasq.leases')}`,
        `pid-file=${path.join(dir, 'dnsmasq.pid')}`,
        'log-facility=-',
        ...known.map((mac) => `dhcp-host=${mac},set:entry`),
        '',
      ].join('\n'),
    );
    const child = network.spawnIn(host.ns, DNSMASQ, ['--keep-in-foreground', `--conf-file=${conf}`]);
    child.stdout?.resume();
    await new Promise<void>((resolve, reject) => {
      let log = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        if (log.length < 100_000) log += chunk.toString();
        if (log.includes('proxy on subnet')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`dnsmasq exited with ${code}: ${log}`)));
    });
    return () => stopChild(child);
  },
};

async function load(network: TestNetwork, client: NetworkHost, args: object): Promise<Record<string, number>> {
  const generator = spawnLineChild(network, client.ns, ['bench/proxy-dhcp-load.ts', JSON.stringify(args)]);
  return JSON.parse(await generator.nextLine((line) => line.startsWith('{'), 600_000)) as Record<string, number>;
}

async function main(): Promise<void> {
  try {
    execFileSync(DNSMASQ, ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('dnsmasq is missing: apt-get install -y dnsmasq-base (or bash scripts/test-deps.sh)');
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'proxy-dhcp-bench-'));
  const network = createTestNetwork('pdbench', SUBNET);
  try {
    const serverHost = network.addHost('server', 2);
    const client = network.addHost('client', 50);
    const rate = {
      mode: 'rate',
      macs: known.slice(0, Number(values.macs)),
      concurrency: Number(values.concurrency),
      seconds: Number(values.seconds),
      timeoutMs: 1000,
    };
    const burst = { mode: 'burst', known: known.slice(0, Number(values.burst)), unknown, windowMs: Number(values.window) * 1000, waitMs: 3000 };
    type Result = { round: number; server: string; rate: Record<string, number>; burst: Record<string, number> };
    const results: Result[] = [];
    for (let round = 1; round <= Number(values.rounds); round++) {
      for (const server of round % 2 === 1 ? [ours, dnsmasq] : [dnsmasq, ours]) {
        const stop = await server.start(network, serverHost, dir);
        try {
          results.push({ round, server: server.name, rate: await load(network, client, rate), burst: await load(network, client, burst) });
        } finally {
          await stop();
        }
        process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
      }
    }
    const f = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));
    console.log(`\nrate: ${rate.concurrency} outstanding DISCOVERs over ${rate.macs.length} MACs for ${rate.seconds} s\n`);
    console.log('| round | server | answers/s | p50 / p99 | lost (1 s timeout) |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const r of results)
      console.log(`| ${r.round} | ${r.server} | ${f(r.rate.answersPerS, 0)} | ${f(r.rate.p50Ms, 2)} / ${f(r.rate.p99Ms, 2)} ms | ${r.rate.lost} |`);
    for (let round = 1; round <= Number(values.rounds); round++) {
      const a = results.find((r) => r.round === round && r.server === ours.name) as Result;
      const b = results.find((r) => r.round === round && r.server === dnsmasq.name) as Result;
      console.log(
        `round ${round}, ours / dnsmasq: answers/s ${f((a.rate.answersPerS ?? 0) / (b.rate.answersPerS ?? 1), 2)}×, p99 ${f((a.rate.p99Ms ?? 0) / (b.rate.p99Ms ?? 1), 2)}× (lower is better)`,
      );
    }
    console.log(`\nburst: ${burst.known.length} machines with an entry + ${burst.unknown.length} without, one DISCOVER each within ${values.window} s\n`);
    console.log('| round | server | known answered once | known unanswered | known answered twice+ | unknown answered | first answer p50 / p99 |');
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const r of results) {
      console.log(
        `| ${r.round} | ${r.server} | ${r.burst.knownAnsweredOnce} / ${burst.known.length} | ${r.burst.knownUnanswered} | ${r.burst.knownAnsweredTwiceOrMore} | ${r.burst.unknownAnswered} | ${f(r.burst.p50Ms, 2)} / ${f(r.burst.p99Ms, 2)} ms |`,
      );
    }
  } finally {
    await network.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
