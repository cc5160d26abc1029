// metal.ensureRamdisk, the control side (spec 001, "Booting a machine into the ramdisk"):
// nothing when the machine's ramdisk is connected; otherwise a one-time PXE boot through
// the BMC, one boot entry per known PXE MAC (each with a fresh single-use discovery token
// bound to it, by reference), a power cycle, and a wait for the ramdisk's join. The BMC
// and boot-entry work runs on the site agent the workflow picked (input.siteAgent), each as
// a `agentCommand` child run; BMC commands keep the step's operation ids, so a retried step
// never sends one twice. boot.cleanUp (a site step) removes the entries and the tokens.
import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { isConnected, ramdiskQueue } from '../core/agent-queues';
import { BOOT_ENTRY_TTL_MS, bootArchitectureFor, type BootEntry } from '../core/boot/boot-entry';
import { discoveryTokenRef } from '../core/boot/discovery-tokens';
import { IronflowError } from '../core/errors';
import { appendEvent } from '../core/events';
import { normalizeMac } from '../core/mac';
import type { JsonObject, StepInput } from '../core/plan';
import type { AgentCommandInput } from '../workflows/agent-command';
import type { ActivityDeps } from './deps';
import { asStep } from './step-failure';

const POLL_MS = 1000;
const PROBE_PICKUP_MS = 5_000;
const COMMAND_HEARTBEAT_MS = 5_000;
const SITE_STEP_HEARTBEAT_TIMEOUT_MS = 10_000;
const PROBE_TIMEOUT_MS = 30_000;
const COMMAND_TIMEOUT_MS = 120_000;

export interface EnsureRamdiskResult {
  booted: boolean;
  /** Already connected: nothing was done. */
  alreadyConnected: boolean;
  macs: string[];
  agentNodeId: string | null;
}

export async function runAgentCommand(temporal: Client, controlQueue: string, workflowId: string, command: AgentCommandInput): Promise<unknown> {
  try {
    return await temporal.workflow.execute('agentCommand', { taskQueue: controlQueue, workflowId, args: [command] });
  } catch (error) {
    // The same attempt started it before (a worker restart): wait for that run.
    if (error instanceof WorkflowExecutionAlreadyStartedError) return temporal.workflow.getHandle(workflowId).result();
    throw error;
  }
}

export function createMetalEnsureRamdiskActivities(deps: ActivityDeps) {
  /**
   * A fresh ramdisk session counts only while the machine is not recorded powered off: a
   * power-off (commissioning's last step, a release) ends the ramdisk without a goodbye, and
   * its session still looks fresh for a few seconds after.
   */
  async function ramdiskConnected(nodeId: string): Promise<boolean> {
    const [session, node] = await Promise.all([deps.db.agentSession.findUnique({ where: { nodeId } }), deps.db.node.findUnique({ where: { id: nodeId }, select: { power: true } })]);
    return session !== null && session.role === 'ramdisk' && isConnected(session.lastSeenAt) && node?.power !== 'off';
  }

  /**
   * A session says a ramdisk ran a moment ago, not that it runs now (a kexec, an abort or a
   * crash end it without a goodbye): ask it. A ramdisk that does not pick up a read-only
   * inventory.refresh within PROBE_PICKUP_MS is not there.
   */
  async function ramdiskAnswers(input: StepInput, attempt: number): Promise<boolean> {
    const { nodeId } = input.target;
    if (!(await ramdiskConnected(nodeId))) return false;
    try {
      await runAgentCommand(deps.temporal, deps.config.controlQueue, `${input.workflowId}/${input.stepKey}/${attempt}/probe`, {
        taskQueue: ramdiskQueue(nodeId),
        activity: 'inventory.refresh',
        input: { workflowId: input.workflowId, stepKey: input.stepKey, use: 'inventory.refresh', with: {}, target: input.target },
        timeoutMs: PROBE_TIMEOUT_MS,
        scheduleToStartMs: PROBE_PICKUP_MS,
        maximumAttempts: 1,
      });
      return true;
    } catch {
      return false;
    }
  }

  return {
    async 'metal.ensureRamdisk'(input: StepInput): Promise<EnsureRamdiskResult> {
      return asStep(async () => {
        const { nodeId } = input.target;
        const context = Context.current();
        const attempt = context.info.attempt;
        if (await ramdiskAnswers(input, attempt)) return { booted: false, alreadyConnected: true, macs: [], agentNodeId: null };
        const node = await deps.db.node.findUnique({ where: { id: nodeId } });
        if (!node || node.deletedAt) throw new IronflowError('NOT_FOUND', `node ${nodeId} not found`, { nodeId });
        const macs = (Array.isArray(node.macs) ? node.macs : []).map((m) => (typeof m === 'string' ? normalizeMac(m) : undefined)).filter((m): m is string => m !== undefined);
        if (macs.length === 0) {
          throw new IronflowError('INVALID_STATE', `node ${nodeId} has no known PXE MAC: inspect it out of band first (metal inspect), or enroll it with --mac`, { nodeId, reason: 'no-known-mac' });
        }
        const agent = input.siteAgent;
        if (!agent) throw new IronflowError('NO_SITE_AGENT', `no site agent of site ${input.target.siteId} was picked for metal.ensureRamdisk`, {});
        // The step heartbeats while a command runs (so it is not abandoned for silence), and a
        // command whose site agent dies mid-way fails on the agent's missing heartbeats (site
        // steps beat every second) instead of waiting out its whole time limit.
        const command = async (activity: string, withInput: JsonObject) => {
          const beating = setInterval(() => context.heartbeat({ phase: activity }), COMMAND_HEARTBEAT_MS);
          try {
            return await runAgentCommand(deps.temporal, deps.config.controlQueue, `${input.workflowId}/${input.stepKey}/${attempt}/${activity}`, {
              taskQueue: agent.taskQueue,
              activity,
              input: { workflowId: input.workflowId, stepKey: input.stepKey, use: activity, with: withInput, target: input.target },
              timeoutMs: COMMAND_TIMEOUT_MS,
              heartbeatTimeoutMs: SITE_STEP_HEARTBEAT_TIMEOUT_MS,
            });
          } finally {
            clearInterval(beating);
          }
        };

        context.heartbeat({ phase: 'boot device' });
        await command('management.setBootDevice', { device: 'pxe', persistent: false });

        // Tokens are minted when their entries are sent, and reused if this step sends them again.
        const notAfter = new Date(Date.now() + BOOT_ENTRY_TTL_MS).toISOString();
        const entries: BootEntry[] = [];
        for (const mac of macs) {
          const { ref } = await discoveryTokenRef(deps.db, deps.secrets, { tenantId: node.tenantId, siteId: node.siteId, poolId: node.poolId, nodeId, workflowId: input.workflowId, mac });
          entries.push({ mac, productUuid: node.productUuid?.toLowerCase() ?? null, arch: bootArchitectureFor(node.arch, node.uefi), nodeId, workflowId: input.workflowId, tokenRef: ref, notAfter });
        }
        context.heartbeat({ phase: 'boot entries' });
        await command('boot.prepareRamdisk', { entries: entries as unknown as JsonObject[] });

        // Whatever ramdisk the machine ran is gone after the cycle: forget its session, so the
        // wait below sees only the join of the ramdisk this boot starts.
        await deps.db.agentSession.deleteMany({ where: { nodeId, role: 'ramdisk' } });
        context.heartbeat({ phase: 'power cycle' });
        await command('power.setPower', { action: 'cycle' });
        // node.power is the last requested power: the cycle leaves it on.
        await deps.db.node.update({ where: { id: nodeId }, data: { power: 'on' } });
        await appendEvent(deps.db, { tenantId: node.tenantId, type: 'node.boot.ramdisk', subjectId: nodeId, data: { workflowId: input.workflowId, agentNodeId: agent.agentNodeId, macs } });

        for (;;) {
          if (await ramdiskConnected(nodeId)) return { booted: true, alreadyConnected: false, macs, agentNodeId: agent.agentNodeId };
          context.heartbeat({ phase: 'waiting for the ramdisk to join', macs });
          await context.sleep(POLL_MS); // throws when the step is cancelled
        }
      });
    },
  };
}
