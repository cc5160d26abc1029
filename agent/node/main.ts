// The agent in node mode: the installed OS's agent. `ironflow agent join --server URL
// --token-file F --node-id ID` joins once with the provisioned token (core/userdata's
// agentJoinArgv); `ironflow agent node [--data-dir D]` (agentNodeArgv) runs it: the session
// (heartbeats, renewal, the host section for the converger) and a Temporal worker on
// node.<nodeId> for NODE_STEP_KINDS only. `startNodeAgent` is the same agent for callers
// that own the process (the machine emulator's installed OS).
import { startRestrictedWorker, type AgentActivity, type RestrictedWorker } from '../common/restricted-worker';
import { runUntilSignal } from '../common/run-until-signal';
import { ControlPlaneClient } from '../site/control-plane-client';
import type { AgentIdentity } from '../site/identity';
import { AgentLog } from '../site/log';
import { CertificateRenewer } from '../site/renew';
import { reportingFailures } from '../site/step-failure';
import { HostConverger } from './host-converger';
import { DEFAULT_NODE_DATA_DIR, ensureNodeJoined } from './join';
import { hostMachine, type NodeMachine } from './machine';
import { NodeSession } from './session';
import { createNodeSteps, NODE_STEP_KINDS } from './steps';

export interface NodeAgentOptions {
  /** The control plane (from the user data's join; stored at the join for later starts). */
  server?: string;
  /** The key pin of the CA the API's certificate chains to (the user data's --serving-ca-pin; stored at the join). */
  servingCaPin?: string;
  tokenFile?: string;
  /** The node this OS was installed for: any other identity is refused. */
  nodeId?: string;
  dataDir?: string;
  machine?: NodeMachine;
  log?: AgentLog;
  dcgmiBinary?: string;
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
  const dataDir = options.dataDir ?? DEFAULT_NODE_DATA_DIR;
  const { identity, settings } = await ensureNodeJoined({ dataDir, server: options.server, servingCaPin: options.servingCaPin, tokenFile: options.tokenFile, nodeId: options.nodeId }, log);
  const client = new ControlPlaneClient(settings.server, undefined, { caPin: settings.servingCaPin });
  const converger = new HostConverger(dataDir, log);
  const session = new NodeSession(identity, client, new CertificateRenewer(identity, client, {}, log), converger, log);
  await session.started();

  const steps = createNodeSteps({ nodeId: identity.current.nodeId, key: identity.key, certificatePem: identity.certificatePem, machine: options.machine ?? hostMachine(), converger, ...(options.dcgmiBinary ? { dcgmiBinary: options.dcgmiBinary } : {}) });
  const activities: Record<string, AgentActivity> = {};
  for (const kind of NODE_STEP_KINDS) activities[kind] = reportingFailures(steps[kind]);
  const { temporal } = identity.current;
  let worker: RestrictedWorker;
  try {
    worker = await startRestrictedWorker({ mode: 'node', kinds: NODE_STEP_KINDS, activities, temporal, credentials: { chain: identity.chain, key: identity.key }, maxConcurrentActivityTaskExecutions: 4 });
  } catch (error) {
    await session.stop();
    throw error;
  }
  log.info('node agent running', { nodeId: identity.current.nodeId, taskQueue: temporal.taskQueue });
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

/** `ironflow agent join`: joins (or finds the identity) and exits. */
export async function joinNodeAgent(options: Pick<NodeAgentOptions, 'server' | 'servingCaPin' | 'tokenFile' | 'nodeId' | 'dataDir'>): Promise<{ nodeId: string }> {
  const { identity } = await ensureNodeJoined({ dataDir: options.dataDir ?? DEFAULT_NODE_DATA_DIR, server: options.server, servingCaPin: options.servingCaPin, tokenFile: options.tokenFile, nodeId: options.nodeId }, new AgentLog());
  return { nodeId: identity.current.nodeId };
}

/** `ironflow agent node`: runs in the foreground until SIGINT or SIGTERM. */
export async function runNodeAgent(options: NodeAgentOptions): Promise<void> {
  await runUntilSignal(await startNodeAgent(options));
}
