// An emulated machine that already runs its own OS, adopted (spec 004 "Adopt"): the operator
// installed our agent on it by hand with a pool's adopt token. The REAL node agent joins with
// that token (no --node-id: the control plane names the new node) and serves the pool's
// acceptance checks from the machine's facts. Its data dir is the OS's own (Machine.osDir).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startNodeAgent, type NodeAgent } from '../node/main';
import type { AgentLog } from '../common/log';
import { emulatedNodeMachine, osRoot } from './installed-os';
import type { Machine } from './machine';

export async function adoptRunningMachine(
  machine: Machine,
  options: { server: string; token: string; servingCaPin?: string; log?: AgentLog },
): Promise<NodeAgent> {
  mkdirSync(machine.osDir, { recursive: true, mode: 0o700 });
  const tokenFile = path.join(machine.osDir, 'adopt-token');
  writeFileSync(tokenFile, `${options.token}\n`, { mode: 0o600 });
  return startNodeAgent({
    server: options.server,
    tokenFile,
    dataDir: machine.osDir,
    root: osRoot(machine),
    machine: await emulatedNodeMachine(machine, machine.description.id),
    ...(options.servingCaPin ? { servingCaPin: options.servingCaPin } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
