// The agent in ramdisk mode: reads its boot parameters (the `if.*` kernel arguments),
// joins as its machine's node with the discovery token and the site agent's assertion,
// keeps a session, and runs a Temporal worker on ramdisk.<nodeId> for the commissioning
// kinds only: inventory.refresh, disk.wipe, deploy.image, boot.kexec, diag.dcgm. Anything
// else sent to its queue is refused. Many ramdisks may share one Temporal connection (the
// machine emulator runs hundreds in one process).
import { heartbeating, reportProgress } from '../common/heartbeating';
import { startRestrictedWorker, type AgentActivity, type RestrictedWorker } from '../common/restricted-worker';
import { ControlPlaneClient } from '../common/control-plane-client';
import { AgentLog } from '../common/log';
import { reportingFailures } from '../common/step-failure';
import type { BootParams } from './boot-params';
import type { RamdiskHardware } from './hardware';
import { RamdiskHeartbeat } from './heartbeat';
import { joinAsRamdisk } from './join';
import type { RamdiskStep, RamdiskStepDeps } from './steps/deps';
import { deployImageStep } from './steps/deploy-image';
import { diskWipeStep } from './steps/disk-wipe';
import { inventoryStep } from './steps/inventory';
import { dcgmStep, kexecStep } from './steps/machine';
import { requireApprovedBatch } from '../common/quorum-check';
import { stepsServedOn, type StepsOf } from '../../core/steps/builtin';

/** The registry's steps served on `ramdisk` (core/steps): the step map below is typed by them. */
export const RAMDISK_STEP_KINDS = stepsServedOn('ramdisk');

export interface RamdiskAgent {
  nodeId: string;
  taskQueue: string;
  log: AgentLog;
  stop(): Promise<void>;
}

export interface RamdiskAgentOptions {
  params: BootParams;
  hardware: RamdiskHardware;
  log?: AgentLog;
  approvalRetryMs?: number;
  /** CA certificates baked into this ramdisk for image sources (a site's own CA). */
  trustedCaPems?: string[];
}

export async function startRamdiskAgent(options: RamdiskAgentOptions): Promise<RamdiskAgent> {
  const log = options.log ?? new AgentLog();
  const client = new ControlPlaneClient(options.params.gateway, undefined, { caPin: options.params.tls });
  const identity = await joinAsRamdisk(options.params, options.hardware, client, log, { approvalRetryMs: options.approvalRetryMs });
  const signer = { key: identity.key, certificatePem: identity.certificatePem };
  const session = new RamdiskHeartbeat(client, signer, log);
  await session.started();
  const deps: RamdiskStepDeps = {
    nodeId: identity.answer.nodeId,
    key: identity.key,
    certificatePem: identity.certificatePem,
    hardware: options.hardware,
    client,
    log,
    heartbeat: reportProgress,
    ...(options.trustedCaPems ? { trustedCaPems: options.trustedCaPems } : {}),
    ...(options.params.cache ? { cacheUrl: options.params.cache } : {}),
  };
  // Wipes and deploys check their batch against the pins the site agent's boot script gave (if.quorum); the command's node is this ramdisk's own.
  const quorum = { pins: options.params.quorum?.split(',') ?? [], client, signer, log, nodeIdOf: () => identity.answer.nodeId };
  const steps: Record<StepsOf<'ramdisk'>, RamdiskStep> = {
    'inventory.refresh': inventoryStep(deps),
    'disk.wipe': requireApprovedBatch('disk.wipe', diskWipeStep(deps), quorum),
    'deploy.image': requireApprovedBatch('deploy.image', deployImageStep(deps), quorum),
    'boot.kexec': kexecStep(deps),
    'diag.dcgm': dcgmStep(deps),
  };
  const activities: Record<string, AgentActivity> = {};
  for (const kind of RAMDISK_STEP_KINDS) activities[kind] = heartbeating(reportingFailures(steps[kind]));
  const { temporal } = identity.answer;
  let worker: RestrictedWorker;
  try {
    worker = await startRestrictedWorker({
      mode: 'ramdisk',
      kinds: RAMDISK_STEP_KINDS,
      activities,
      temporal,
      credentials: { chain: identity.answer.certificateChain, key: identity.key },
      maxConcurrentActivityTaskExecutions: 4,
    });
  } catch (error) {
    session.stop();
    throw error;
  }
  log.info('ramdisk running', { nodeId: identity.answer.nodeId, taskQueue: temporal.taskQueue });
  return {
    nodeId: identity.answer.nodeId,
    taskQueue: temporal.taskQueue,
    log,
    async stop() {
      session.stop();
      await worker.stop();
    },
  };
}
