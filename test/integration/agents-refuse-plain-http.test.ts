// Every agent mode refuses a plain-http control plane off loopback at its start, with
// INVALID_CONFIG naming the setting and the fix, before anything leaves the machine: the
// site agent (control_plane_url, boot.gateway_url), the ramdisk (if.gateway) and the
// installed OS's node agent (--server), each as the real `ironflow agent …` process. They
// run in a test network (10.77.93.0/24) where a listener stands at the address they were
// given: it must see no connection at all (and nothing could reach past the namespace).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../../services/config';
import { createTestNetwork, requireNetworkNamespaces, type NetworkHost, type TestNetwork } from '../helpers/netns';

const SUBNET = '10.77.93';
const PORT = 8443;
let network: TestNetwork;
let agentHost: NetworkHost;
let listener: ChildProcess;
let connections = 0;
let dir: string;

beforeAll(async () => {
  requireNetworkNamespaces();
  dir = mkdtempSync(path.join(inject('runDir'), 'plain-http-'));
  network = createTestNetwork('plain', SUBNET);
  agentHost = network.addHost('agent', 2);
  const cpHost = network.addHost('cp', 9);
  // A control plane's address on the network that counts the connections it is offered.
  const script = `require('net').createServer((s) => { console.log('connection'); s.destroy(); }).listen(${PORT}, '${cpHost.ip}', () => console.log('listening'));`;
  listener = network.spawnIn(cpHost.ns, process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => {
    listener.stdout?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      connections += text.split('connection').length - 1;
      if (text.includes('listening')) resolve();
    });
  });
}, 60_000);

afterAll(async () => {
  listener?.kill('SIGTERM');
  await network?.destroy();
});

const offLoopback = () => `http://${SUBNET}.9:${PORT}`;

/** `ironflow agent <args>` in the agent's namespace: its exit code and stderr. */
function runAgent(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const child = network.spawnIn(agentHost.ns, process.execPath, [path.join(repoRoot, 'bin', 'ironflow.mjs'), 'agent', ...args], {
    cwd: repoRoot,
    env: { ...process.env, IRONFLOW_JOIN_TOKEN: 'ifst_refused.never-sent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

function siteConfig(name: string, lines: string[]): string {
  const file = path.join(dir, `${name}.toml`);
  writeFileSync(file, [...lines, 'data_dir = "data"', '', '[boot]', 'http_address = "127.0.0.1"', 'http_port = 0', ''].join('\n'));
  return file;
}

describe('agents refuse plain http off loopback', () => {
  it('the site agent: control_plane_url', async () => {
    const run = await runAgent(['site', '--config', siteConfig('site', [`control_plane_url = "${offLoopback()}"`])]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `INVALID_CONFIG: ${path.join(dir, 'site.toml')}: control_plane_url is plain http to ${SUBNET}.9:${PORT}, which is not a loopback address`,
    );
    expect(run.stderr).toContain(`Use https://${SUBNET}.9:${PORT}`);
    expect(run.stderr).toContain('control_plane_ca_file');
    expect(run.stderr).not.toContain('ifst_refused');
  });

  it('the site agent: boot.gateway_url (what its ramdisks would join), even with a loopback control plane', async () => {
    const file = path.join(dir, 'gateway.toml');
    writeFileSync(
      file,
      [
        'control_plane_url = "http://127.0.0.1:9"',
        'data_dir = "data-gw"',
        '',
        '[boot]',
        'http_address = "127.0.0.1"',
        'http_port = 0',
        `gateway_url = "${offLoopback()}"`,
        '',
      ].join('\n'),
    );
    const run = await runAgent(['site', '--config', file]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`INVALID_CONFIG: ${file}: boot.gateway_url is plain http to ${SUBNET}.9:${PORT}, which is not a loopback address`);
    expect(run.stderr).toContain('if.tls');
  });

  it('the ramdisk: if.gateway on its kernel command line', async () => {
    const cmdline = path.join(dir, 'cmdline');
    writeFileSync(
      cmdline,
      `console=ttyS0 if.gateway=${offLoopback()} if.ca=${'a'.repeat(64)} if.mac=52:54:00:77:93:02 if.token=ifdt_x.never-sent if.assertion=x\n`,
    );
    const run = await runAgent(['ramdisk', '--cmdline', cmdline]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`INVALID_CONFIG: if.gateway is plain http to ${SUBNET}.9:${PORT}, which is not a loopback address`);
    expect(run.stderr).toContain('if.tls');
    expect(run.stderr).not.toContain('never-sent');
  });

  it('the node agent: --server of agent join and agent node', async () => {
    const tokenFile = path.join(dir, 'join-token');
    writeFileSync(tokenFile, 'ifjt_x.never-sent', { mode: 0o600 });
    for (const mode of ['join', 'node']) {
      const run = await runAgent([
        mode,
        '--server',
        offLoopback(),
        '--token-file',
        tokenFile,
        '--node-id',
        'node_01jabcdefghjkmnpqrstvwxyz0',
        '--data-dir',
        path.join(dir, `node-${mode}`),
      ]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(`INVALID_CONFIG: --server is plain http to ${SUBNET}.9:${PORT}, which is not a loopback address`);
      expect(run.stderr).toContain('--serving-ca-pin');
      expect(run.stderr).not.toContain('never-sent');
    }
    // A pin with plain http, even on loopback, is a mistake named as such (not a silent downgrade).
    const pinned = await runAgent([
      'join',
      '--server',
      'http://127.0.0.1:9',
      '--serving-ca-pin',
      `sha256/${'A'.repeat(43)}=`,
      '--token-file',
      tokenFile,
      '--node-id',
      'node_01jabcdefghjkmnpqrstvwxyz0',
      '--data-dir',
      path.join(dir, 'node-pinned'),
    ]);
    expect(pinned.stderr).toContain('INVALID_CONFIG: --serving-ca-pin is given but --server is not https');
  });

  it('none of them opened a connection to the plain-http address', async () => {
    // The listener is alive and reachable (a connection from the agent's namespace counts)…
    const probe = network.spawnIn(agentHost.ns, process.execPath, ['-e', `require('net').connect(${PORT}, '${SUBNET}.9').on('close', () => process.exit(0))`], {
      stdio: 'ignore',
    });
    await new Promise((resolve) => probe.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // …and that probe is the only connection it ever saw.
    expect(connections).toBe(1);
  });
});
