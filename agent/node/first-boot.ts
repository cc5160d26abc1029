// What an installed OS does with our user data when it boots (cloud-init's or Ignition's part,
// as far as the agent needs it): on first boot — no identity in the data dir yet — the join
// token to its 0600 file and `agent join` with the document's --server and --node-id; then the
// node agent, on every boot. The machine emulator's installed OS and the OS image built by
// `npm run build:os-image` both run this.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { AgentLog } from '../common/log';
import type { NodeMachine } from './machine';
import { startNodeAgent, type NodeAgent } from './main';
import { joinArgsFromUserData, writeJoinTokenFile } from './user-data';

interface FirstBootOptions {
  userData: { kind: string; document: string };
  /** The OS's own data dir for the agent (its identity survives reboots there). */
  dataDir: string;
  /** The OS's root directory (default `/`: this host). */
  root?: string;
  /** The machine's facts, given the node id the user data names (default: read from the host under root). */
  machine?: (nodeId: string) => Promise<NodeMachine>;
  dcgmiBinary?: string;
  log?: AgentLog;
}

export async function startInstalledOsAgent(options: FirstBootOptions): Promise<NodeAgent> {
  const { kind, document } = options.userData;
  const { server, nodeId, servingCaPin } = joinArgsFromUserData(kind, document);
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const tokenFile = path.join(options.dataDir, 'join-token');
  const firstBoot = !existsSync(path.join(options.dataDir, 'identity.json'));
  if (firstBoot) writeJoinTokenFile(kind, document, tokenFile);
  return startNodeAgent({
    server,
    servingCaPin,
    nodeId,
    dataDir: options.dataDir,
    ...(firstBoot ? { tokenFile } : {}),
    ...(options.root ? { root: options.root } : {}),
    ...(options.machine ? { machine: await options.machine(nodeId) } : {}),
    ...(options.dcgmiBinary ? { dcgmiBinary: options.dcgmiBinary } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
