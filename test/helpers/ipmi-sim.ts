// OpenIPMI's ipmi_sim (Debian `openipmi`), started per test: a LAN BMC on a free UDP port
// with one admin user, whose chassis control (power, boot device) is a small script that
// keeps the machine's state in files, so a test can see what the BMC was told.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { stopChild } from './child-process';
import { freePort } from './ports';

export interface RunningIpmiSim {
  address: string;
  username: string;
  password: string;
  /** The 16 GUID bytes the BMC holds, as hex. */
  guidHex: string;
  /** What the chassis was last told: power '0'/'1', boot 'pxe'/'default'/…, or null. */
  chassis(name: 'power' | 'boot'): string | null;
  /** Every chassis-control call, in order ("set power 1", "get power", …). */
  calls(): string[];
  close(): Promise<void>;
}

const chassisScript = `#!/bin/sh
# ipmi_sim chassis control: <mc> get <param>... | <mc> set <param> <value>...
dir=$(dirname "$0")
shift
op=$1; shift
echo "$op $*" >> "$dir/calls.log"
case $op in
  get)
    for p in "$@"; do
      case $p in
        power) echo "power:$(cat "$dir/power" 2>/dev/null || echo 0)";;
        boot) echo "boot:$(cat "$dir/boot" 2>/dev/null || echo default)";;
      esac
    done;;
  set)
    while [ $# -gt 1 ]; do
      p=$1; v=$2; shift 2
      case $p in
        power) echo "$v" > "$dir/power";;
        reset) echo 1 > "$dir/power";;
        boot) echo "$v" > "$dir/boot";;
      esac
    done;;
esac
exit 0
`;

export async function startIpmiSim(options: { username?: string; password?: string; guidHex?: string } = {}): Promise<RunningIpmiSim> {
  const dir = mkdtempSync(path.join(inject('runDir'), 'ironflow-ipmisim-'));
  const username = options.username ?? 'admin';
  const password = options.password ?? 'ipmi-pw-1';
  const guidHex = options.guidHex ?? '0123456789abcdef0011223344556677';
  const port = await freePort();
  writeFileSync(path.join(dir, 'chassis.sh'), chassisScript);
  chmodSync(path.join(dir, 'chassis.sh'), 0o755);
  mkdirSync(path.join(dir, 'state'));
  writeFileSync(
    path.join(dir, 'lan.conf'),
    [
      'name "ironflow-test"',
      'set_working_mc 0x20',
      '  startlan 1',
      `    addr 127.0.0.1 ${port}`,
      '    priv_limit admin',
      '    allowed_auths_callback none md2 md5 straight',
      '    allowed_auths_user none md2 md5 straight',
      '    allowed_auths_operator none md2 md5 straight',
      '    allowed_auths_admin none md2 md5 straight',
      `    guid ${guidHex}`,
      '  endlan',
      `  chassis_control "${path.join(dir, 'chassis.sh')} 0x20"`,
      `  user 2 true "${username}" "${password}" admin 10 none md2 md5 straight`,
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(dir, 'emu.cmd'), ['mc_setbmc 0x20', 'mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02', 'mc_enable 0x20', ''].join('\n'));
  const child = spawn('ipmi_sim', ['-c', path.join(dir, 'lan.conf'), '-f', path.join(dir, 'emu.cmd'), '-s', path.join(dir, 'state'), '-n'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  await waitForBmc(child, port, () => output);
  const read = (name: string) => {
    try {
      return readFileSync(path.join(dir, name), 'utf8').trim();
    } catch {
      return null;
    }
  };
  return {
    address: `127.0.0.1:${port}`,
    username,
    password,
    guidHex,
    chassis: (name) => read(name),
    calls: () => (read('calls.log') ?? '').split('\n').filter(Boolean),
    close: () => stopChild(child),
  };
}

/** ipmi_sim prints nothing when ready: wait until its UDP port answers an RMCP ping. */
async function waitForBmc(child: ChildProcess, port: number, output: () => string): Promise<void> {
  const { createSocket } = await import('node:dgram');
  // RMCP presence ping (ASF): version 6, class ASF, IANA 4542, type 0x80.
  const ping = Buffer.from([0x06, 0x00, 0xff, 0x06, 0x00, 0x00, 0x11, 0xbe, 0x80, 0x00, 0x00, 0x00]);
  const deadline = Date.now() + 10_000;
  const socket = createSocket('udp4');
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`ipmi_sim exited (${child.exitCode}): ${output()}`);
      const answered = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 200);
        socket.once('message', () => {
          clearTimeout(timer);
          resolve(true);
        });
        socket.send(ping, port, '127.0.0.1');
      });
      if (answered) return;
      if (Date.now() > deadline) throw new Error(`ipmi_sim did not answer on UDP ${port} within 10 s: ${output()}`);
    }
  } finally {
    socket.close();
  }
}
