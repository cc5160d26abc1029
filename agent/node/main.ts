// The agent in node mode: the installed OS's agent. `ironflow agent join --server URL
// --token-file F --node-id ID` joins once with the provisioned token (core/userdata's
// agentJoinArgv); `ironflow agent node [--data-dir D]` (agentNodeArgv) runs it: the session
// (heartbeats, renewal, the host section for the converger) and a Temporal worker on
// node.<nodeId> for NODE_STEP_KINDS only. `startNodeAgent` is the same agent for callers
// that own the process (the machine emulator's installed OS).
import { startRestrictedWorker, type AgentActivity, type RestrictedWorker } from '../common/restricted-worker';
import { runUntilSignal } from '../common/run-until-signal';
import { ControlPlaneClient } from '../common/control-plane-client';
import type { AgentIdentity } from '../common/identity';
import { AgentLog } from '../common/log';
import { CertificateRenewer } from '../common/renew';
import { reportingFailures } from '../common/step-failure';
import { heartbeating } from '../common/heartbeating';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { HostConverger } from './host-converger';
import { HostRoot } from './host-root';
import { DEFAULT_NODE_DATA_DIR, ensureNodeJoined } from './join';
import { readHostMachine, type NodeMachine } from './machine';
import { NodeSession } from './session';
import { createNodeSteps, NODE_STEP_KINDS } from './steps';
import { installWorkerRuntime } from '../../worker/runtime';

interface NodeAgentOptions {
  /** The control plane (from the user data's join; stored at the join for later starts). */
  server?: string;
  /** The key pin of the CA the API's certificate chains to (the user data's --serving-ca-pin; stored at the join). */
  servingCaPin?: string;
  tokenFile?: string;
  /** The node this OS was installed for: any other identity is refused. */
  nodeId?: string;
  dataDir?: string;
  /** The host the agent manages: `/` (default) on a machine, a directory for the emulator's installed OS. */
  root?: string;
  /** The machine's facts (default: read from the host under root). */
  machine?: NodeMachine;
  /** How often the converger applies an unchanged host spec again (drift). */
  hostRecheckMs?: number;
  log?: AgentLog;
  dcgmiBinary?: string;
  /**
   * host:port where the Temporal SDK exports the agent's worker metrics for Prometheus
   * (GET /metrics). Only for an agent in a process of its own: the SDK installs one runtime a
   * process, so the emulator's installed OSes, which share one, leave it unset.
   */
  metricsAddress?: string;
}

export interface NodeAgent {
  identity: AgentIdentity;
  session: NodeSession;
  converger: HostConverger;
  log: AgentLog;
  stop(): Promise<void>;
}

export async function startNodeAgent(options: NodeAgentOptions): Promise<NodeAgent> {
  const log = options.log ?? new AgentLog();
  // Before the join, so an address that cannot be listened on stops the agent before it does anything.
  if (options.metricsAddress) installWorkerRuntime({ metricsAddress: options.metricsAddress, metricsSetting: '--metrics-address' });
  const dataDir = options.dataDir ?? DEFAULT_NODE_DATA_DIR;
  const { identity, settings } = await ensureNodeJoined(
    { dataDir, server: options.server, servingCaPin: options.servingCaPin, tokenFile: options.tokenFile, nodeId: options.nodeId },
    log,
  );
  const client = new ControlPlaneClient(settings.server, undefined, { caPin: settings.servingCaPin });
  const root = new HostRoot(options.root ?? '/');
  const converger = new HostConverger(dataDir, root, log, options.hostRecheckMs ? { recheckMs: options.hostRecheckMs } : {});
  const session = new NodeSession(identity, client, new CertificateRenewer(identity, client, {}, log), converger, log, bootIdOf(root));
  await session.started();

  const machine = options.machine ?? (await readHostMachine(root));
  const steps = createNodeSteps({
    nodeId: identity.current.nodeId,
    key: identity.key,
    certificatePem: identity.certificatePem,
    machine,
    converger,
    root,
    ...(options.dcgmiBinary ? { dcgmiBinary: options.dcgmiBinary } : {}),
  });
  const activities: Record<string, AgentActivity> = {};
  for (const kind of NODE_STEP_KINDS) activities[kind] = heartbeating(reportingFailures(steps[kind]));
  const { temporal } = identity.current;
  let worker: RestrictedWorker;
  try {
    worker = await startRestrictedWorker({
      mode: 'node',
      kinds: NODE_STEP_KINDS,
      activities,
      temporal,
      credentials: { chain: identity.chain, key: identity.key },
      maxConcurrentActivityTaskExecutions: 4,
    });
  } catch (error) {
    await session.stop();
    throw error;
  }
  log.info('node agent running', {
    nodeId: identity.current.nodeId,
    taskQueue: temporal.taskQueue,
    ...(options.metricsAddress ? { metrics: `http://${options.metricsAddress}/metrics` } : {}),
  });
  return {
    identity,
    session,
    converger,
    log,
    async stop() {
      await session.stop();
      await worker.stop();
      log.info('node agent stopped', { nodeId: identity.current.nodeId });
    },
  };
}

/** The kernel's id of this boot (a new one per boot), or a new id when the host has none to read. */
function bootIdOf(root: HostRoot): string {
  try {
    const id = readFileSync(root.path('/proc/sys/kernel/random/boot_id'), 'utf8').trim().slice(0, 64);
    if (id) return id;
  } catch {
    // no /proc in the root: this start stands for a boot
  }
  return randomUUID();
}

/** `ironflow agent join`: joins (or finds the identity) and exits. */
export async function joinNodeAgent(
  options: Pick<NodeAgentOptions, 'server' | 'servingCaPin' | 'tokenFile' | 'nodeId' | 'dataDir'>,
): Promise<{ nodeId: string }> {
  const { identity } = await ensureNodeJoined(
    {
      dataDir: options.dataDir ?? DEFAULT_NODE_DATA_DIR,
      server: options.server,
      servingCaPin: options.servingCaPin,
      tokenFile: options.tokenFile,
      nodeId: options.nodeId,
    },
    new AgentLog(),
  );
  return { nodeId: identity.current.nodeId };
}

/** `ironflow agent node`: runs in the foreground until SIGINT or SIGTERM. */
export async function runNodeAgent(options: NodeAgentOptions): Promise<void> {
  await runUntilSignal(await startNodeAgent(options));
}
