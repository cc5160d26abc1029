// sushy-tools' Redfish emulator (PyPI), started per test with its fake driver on a free
// port, with basic auth (bcrypt htpasswd) and optionally TLS with a throwaway CA.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { JsonClient } from '../../agent/bmc/http-json';
import { stopChild } from './child-process';
import { freePort } from './ports';
import { makeServerCertificate } from './tls';

export interface SushySystem {
  uuid: string;
  name: string;
  macs: Array<{ mac: string; ip?: string }>;
  powerState?: 'On' | 'Off';
}

export interface RunningSushy {
  url: string;
  caPem?: string;
  username: string;
  password: string;
  dir: string;
  close(): Promise<void>;
}

const INSTALL_SUSHY = 'bash scripts/test-deps.sh (or python3 -m pip install sushy-tools==2.2.0)';

/** A missing peer fails the test with the command that installs it (never a skip). */
function requireSushy(): void {
  const onPath = (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir !== '' && existsSync(path.join(dir, 'sushy-emulator')));
  if (!onPath) throw new Error(`sushy-emulator is not on PATH: ${INSTALL_SUSHY}`);
}

export async function startSushy(options: { systems: SushySystem[]; tls?: boolean; username?: string; password?: string }): Promise<RunningSushy> {
  requireSushy();
  const dir = mkdtempSync(path.join(inject('runDir'), 'ironflow-sushy-'));
  const username = options.username ?? 'admin';
  const password = options.password ?? 'sushy-pw-1';
  let htpasswd: string;
  try {
    htpasswd = execFileSync(
      'python3',
      ['-c', 'import bcrypt,sys; print(sys.argv[1] + ":" + bcrypt.hashpw(sys.argv[2].encode(), bcrypt.gensalt(rounds=4)).decode())', username, password],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } catch (error) {
    throw new Error(`python3 with bcrypt (which sushy-tools brings) is missing: ${INSTALL_SUSHY}; ${(error as Error).message.slice(0, 300)}`);
  }
  writeFileSync(path.join(dir, 'htpasswd'), htpasswd);
  const port = await freePort();
  const certificates = options.tls ? makeServerCertificate(dir) : undefined;
  const systems = options.systems.map((s) => ({
    uuid: s.uuid,
    name: s.name,
    power_state: s.powerState ?? 'Off',
    external_notifier: false,
    nics: s.macs.map((nic) => ({ mac: nic.mac, ...(nic.ip ? { ip: nic.ip } : {}) })),
  }));
  const config = [
    'import json',
    'SUSHY_EMULATOR_FAKE_DRIVER = True',
    "SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'",
    `SUSHY_EMULATOR_LISTEN_PORT = ${port}`,
    `SUSHY_EMULATOR_AUTH_FILE = ${JSON.stringify(path.join(dir, 'htpasswd'))}`,
    `SUSHY_EMULATOR_STATE_DIR = ${JSON.stringify(path.join(dir, 'state'))}`,
    `SUSHY_EMULATOR_FAKE_SYSTEMS = json.loads(${JSON.stringify(JSON.stringify(systems))})`,
    "SUSHY_EMULATOR_VMEDIA_DEVICES = {'Cd': {'Name': 'Virtual CD', 'MediaTypes': ['CD', 'DVD']}}",
    ...(certificates
      ? [`SUSHY_EMULATOR_SSL_CERT = ${JSON.stringify(certificates.certFile)}`, `SUSHY_EMULATOR_SSL_KEY = ${JSON.stringify(certificates.keyFile)}`]
      : []),
  ].join('\n');
  writeFileSync(path.join(dir, 'emulator.conf'), config);
  // Its scratch files (Python's tempfile) go with the rest of the run's.
  const child = spawn('sushy-emulator', ['--config', path.join(dir, 'emulator.conf')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: dir },
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const url = `${certificates ? 'https' : 'http'}://127.0.0.1:${port}`;
  await waitUntilServing(url, certificates?.caPem, child, () => output);
  return {
    url,
    ...(certificates ? { caPem: certificates.caPem } : {}),
    username,
    password,
    dir,
    close: () => stopChild(child),
  };
}

async function waitUntilServing(url: string, caPem: string | undefined, child: ChildProcess, output: () => string): Promise<void> {
  const client = new JsonClient(new URL(url), { caPem, timeoutMs: 1000 });
  const deadline = Date.now() + 30_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`sushy-emulator exited (${child.exitCode}): ${output()}`);
      const answer = await client.request('GET', '/redfish/v1/', {}).catch(() => null);
      if (answer?.status === 200) return;
      if (Date.now() > deadline) throw new Error(`sushy-emulator did not serve ${url} within 30 s: ${output()}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  } finally {
    client.close();
  }
}
