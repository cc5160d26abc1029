// metal.ensureRamdisk, the control side (spec 001, "Booting a machine into the ramdisk"):
// nothing when the machine's ramdisk is connected; otherwise a one-time PXE boot through
// the BMC, one boot entry per known PXE MAC (each with a fresh single-use discovery token
// bound to it, by reference), a power cycle, and a wait for the ramdisk's join. The BMC
// and boot-entry work runs on the site agent the workflow picked (input.siteAgent), each as
// a `agentCommand` child run; BMC commands keep the step's operation ids, so a retried step
// never sends one twice. boot.cleanUp (a site step) removes the entries and the tokens.
// A machine enrolled with a product UUID and no MACs (an IPMI BMC names no NICs) is first
// PXE-booted with no entry, so the site agent sees it: the step matches the sighting to the
// machine (services/metal/pxe-candidate.ts) and waits for metal.confirmMac, or binds it at once on
// a pool that trusts its provisioning network, and says in the workflow's status why it waits.
import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Node } from '../generated/prisma-sqlite/client';
import { isConnected, ramdiskQueue } from '../core/agent-queues';
import { BOOT_ENTRY_TTL_MS, bootArchitectureFor, type BootEntry } from '../core/boot/boot-entry';
import { discoveryTokenRef } from '../services/boot/discovery-tokens';
import { waitedFor } from '../core/deadlines';
import { IronflowError } from '../core/errors';
import { agentCommandSummary } from '../core/workflow-summaries';
import { appendEvent } from '../services/events';
import { macsOf } from '../services/metal/confirm-mac';
import { findPxeCandidate, isUsableProductUuid } from '../services/metal/pxe-candidate';
import type { JsonObject, StepInput } from '../core/plan';
import { sameProductUuid } from '../core/product-uuid';
import { inventoryOutputSchema } from '../core/schemas/inventory';
import { poolPolicySchema } from '../core/schemas/pools';
import { stepDeadline } from '../services/step-deadline';
import type { AgentCommandInput } from '../workflows/agent-command';
import { stepProgressSignal } from '../workflows/provision-handles';
import type { ActivityDeps } from './deps';
import { asStep } from './step-failure';

const POLL_MS = 1000;
const DISCOVERY_POLL_MS = 2000;
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
    return await temporal.workflow.execute('agentCommand', {
      taskQueue: controlQueue,
      workflowId,
      args: [command],
      staticSummary: agentCommandSummary(command),
    });
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
    const [session, node] = await Promise.all([
      deps.db.agentSession.findUnique({ where: { nodeId } }),
      deps.db.node.findUnique({ where: { id: nodeId }, select: { power: true } }),
    ]);
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
        // The waits below end here, saying what they waited for (not at Temporal's bare timeout).
        const deadline = stepDeadline();
        if (await ramdiskAnswers(input, attempt)) return { booted: false, alreadyConnected: true, macs: [], agentNodeId: null };
        const node = await deps.db.node.findUnique({ where: { id: nodeId } });
        if (!node || node.deletedAt) throw new IronflowError('NOT_FOUND', `node ${nodeId} not found`, { nodeId });
        const agent = input.siteAgent;
        if (!agent) throw new IronflowError('NO_SITE_AGENT', `no site agent of site ${input.target.siteId} was picked for metal.ensureRamdisk`, {});
        // The step heartbeats while a command runs (so it is not abandoned for silence), and a
        // command whose site agent dies mid-way fails on the agent's missing heartbeats (site
        // steps beat every second) instead of waiting out its whole time limit. A `round` (the
        // discovery boot) keeps its commands and their BMC operation ids (<workflow>/<step
        // key>/<command>) apart from the ramdisk boot's, so its power cycle is not taken for the
        // later one.
        const command = async (activity: string, withInput: JsonObject, round?: string) => {
          const beating = setInterval(() => context.heartbeat({ phase: activity }), COMMAND_HEARTBEAT_MS);
          const stepKey = round ? `${input.stepKey}:${round}` : input.stepKey;
          try {
            return await runAgentCommand(deps.temporal, deps.config.controlQueue, `${input.workflowId}/${stepKey}/${attempt}/${activity}`, {
              taskQueue: agent.taskQueue,
              activity,
              input: {
                workflowId: input.workflowId,
                stepKey,
                use: activity,
                with: withInput,
                target: input.target,
                ...(input.quorum ? { quorum: input.quorum } : {}),
              },
              timeoutMs: COMMAND_TIMEOUT_MS,
              heartbeatTimeoutMs: SITE_STEP_HEARTBEAT_TIMEOUT_MS,
            });
          } finally {
            clearInterval(beating);
          }
        };
        /** Power-cycles into a one-time PXE boot; answers when the power command was sent. */
        let cycledAt = new Date();
        const pxeCycle = async (round?: string): Promise<Date> => {
          context.heartbeat({ phase: 'boot device' });
          await command('management.setBootDevice', { device: 'pxe', persistent: false }, round);
          // Whatever ramdisk the machine ran is gone after the cycle: forget its session, so a
          // wait sees only the join of the ramdisk this boot starts.
          await deps.db.agentSession.deleteMany({ where: { nodeId, role: 'ramdisk' } });
          context.heartbeat({ phase: 'power cycle' });
          const sentAt = new Date();
          await command('power.setPower', { action: 'cycle' }, round);
          cycledAt = sentAt;
          // node.power is the last requested power: the cycle leaves it on.
          await deps.db.node.update({ where: { id: nodeId }, data: { power: 'on' } });
          return sentAt;
        };

        let macs = macsOf(node);
        let discovered = false;
        if (macs.length === 0) {
          if (!isUsableProductUuid(node.productUuid)) {
            throw new IronflowError(
              'INVALID_STATE',
              `node ${nodeId} has no known PXE MAC and no usable product UUID to discover one by: enroll it with --mac or --product-uuid, or confirm its MAC (ironflow metal confirm-mac)`,
              { nodeId, reason: 'no-known-mac' },
            );
          }
          const learned = await learnPxeMac(node, agent.agentNodeId, await pxeCycle('discovery'), waitReporter(input, deadline), deadline);
          macs = learned.macs;
          discovered = learned.source === 'discovered';
        }

        // Tokens are minted when their entries are sent, and reused if this step sends them again.
        const notAfter = new Date(Date.now() + BOOT_ENTRY_TTL_MS).toISOString();
        const entries: BootEntry[] = [];
        for (const mac of macs) {
          const { ref } = await discoveryTokenRef(deps.db, deps.secrets, {
            tenantId: node.tenantId,
            siteId: node.siteId,
            poolId: node.poolId,
            nodeId,
            workflowId: input.workflowId,
            mac,
          });
          entries.push({
            mac,
            productUuid: node.productUuid?.toLowerCase() ?? null,
            arch: bootArchitectureFor(node.arch, node.uefi),
            nodeId,
            workflowId: input.workflowId,
            tokenRef: ref,
            notAfter,
          });
        }
        context.heartbeat({ phase: 'boot entries' });
        await command('boot.prepareRamdisk', { entries: entries as unknown as JsonObject[] });
        await pxeCycle();
        await appendEvent(deps.db, {
          tenantId: node.tenantId,
          type: 'node.boot.ramdisk',
          subjectId: nodeId,
          data: { workflowId: input.workflowId, agentNodeId: agent.agentNodeId, macs },
        });

        const joinWait = `the ramdisk of node ${nodeId} to join after power cycle ${attempt} (PXE MACs ${macs.join(', ')})`;
        await waitReporter(input, deadline)(joinWait);
        while (!(await ramdiskConnected(nodeId))) {
          if (Date.now() >= deadline) {
            // Not retried: a retry reuses this attempt's power cycle (its operation id) and would only wait again.
            throw new IronflowError(
              'DRIVER_ERROR',
              `${waitedFor(Date.now() - cycledAt.getTime(), joinWait)}: it never joined; check the machine's console (did it PXE-boot from the site agent?) and the site agent's boot log`,
              {
                nodeId,
                reason: 'join-deadline',
                macs,
              },
            );
          }
          context.heartbeat({ phase: joinWait, macs });
          await context.sleep(POLL_MS); // throws when the step is cancelled
        }
        if (discovered) await checkDiscoveredIdentity(input, attempt, node, macs[0] as string);
        return { booted: true, alreadyConnected: false, macs, agentNodeId: agent.agentNodeId };
      });
    },
  };

  /** Tells the workflow (status query, Web UI) what the step waits for and until when (the step's deadline), when that changes. */
  function waitReporter(input: StepInput, deadline: number) {
    let last: string | null = null;
    const until = new Date(deadline).toISOString();
    return async (waitingFor: string) => {
      Context.current().heartbeat({ phase: 'pxe discovery', waitingFor, until });
      if (waitingFor === last) return;
      last = waitingFor;
      await deps.temporal.workflow
        .getHandle(input.workflowId)
        .signal(stepProgressSignal, { key: input.stepKey, progress: { waitingFor, since: new Date().toISOString(), until } });
    };
  }

  /**
   * After the discovery boot: the MAC an operator confirms (any door), or the candidate
   * itself on a pool with policy.trustProvisioningNetwork. Meanwhile a new candidate is
   * published once, and the wait names its reason.
   */
  async function learnPxeMac(
    node: Node,
    agentNodeId: string,
    powerCommandAt: Date,
    report: (waitingFor: string) => Promise<void>,
    deadline: number,
  ): Promise<{ macs: string[]; source: string | null }> {
    const context = Context.current();
    let waiting = 'not-seen';
    const pool = node.poolId ? await deps.db.pool.findUnique({ where: { id: node.poolId } }) : null;
    const trusted = pool ? poolPolicySchema.parse(pool.policy).trustProvisioningNetwork : false;
    for (;;) {
      const current = await deps.db.node.findUniqueOrThrow({ where: { id: node.id } });
      const known = macsOf(current);
      if (known.length > 0) return { macs: known, source: current.macSource };
      const found = await findPxeCandidate(deps.db, { nodeId: node.id, siteId: node.siteId, productUuid: node.productUuid as string, powerCommandAt });
      if (Date.now() >= deadline) {
        const operator = waiting === 'metal.confirmMac';
        const what = operator
          ? `an operator to confirm node ${node.id}'s PXE MAC (metal.confirmMac)`
          : `node ${node.id}'s PXE boot to be seen by a site agent after its power cycle (${waiting})`;
        throw new IronflowError(operator ? 'INVALID_STATE' : 'DRIVER_ERROR', waitedFor(Date.now() - powerCommandAt.getTime(), what), {
          nodeId: node.id,
          reason: 'discovery-deadline',
        });
      }
      if (found.kind === 'none') await report((waiting = found.reason));
      else if (trusted || current.discoveredMac !== found.mac) {
        const data = trusted ? { macs: [found.mac], macSource: 'discovered', discoveredMac: null } : { discoveredMac: found.mac };
        // Guarded: an operator's metal.confirmMac in between wins.
        const bound = await deps.db.$transaction(async (tx) => {
          const updated = await tx.node.updateMany({ where: { id: node.id, version: current.version }, data: { ...data, version: { increment: 1 } } });
          if (updated.count === 1) {
            await appendEvent(tx, {
              tenantId: node.tenantId,
              type: 'node.pxe-mac.discovered',
              subjectId: node.id,
              data: { nodeId: node.id, mac: found.mac, productUuid: found.productUuid, siteId: node.siteId, agentNodeId: found.agentNodeId, bound: trusted },
            });
          }
          return updated.count === 1;
        });
        if (bound && trusted) return { macs: [found.mac], source: 'discovered' };
        continue;
      } else await report((waiting = 'metal.confirmMac'));
      context.heartbeat({ phase: 'pxe discovery', agentNodeId });
      await context.sleep(DISCOVERY_POLL_MS); // throws when the step is cancelled
    }
  }

  /**
   * policy.trustProvisioningNetwork's backstop: any host on the network could have claimed the
   * machine's UUID from its own MAC. Before anything is written, the ramdisk that joined must
   * report a spelling of the enrolled UUID and a NIC with the bound MAC.
   */
  async function checkDiscoveredIdentity(input: StepInput, attempt: number, node: Node, mac: string): Promise<void> {
    const answer = await runAgentCommand(deps.temporal, deps.config.controlQueue, `${input.workflowId}/${input.stepKey}/${attempt}/identity`, {
      taskQueue: ramdiskQueue(node.id),
      activity: 'inventory.refresh',
      input: { workflowId: input.workflowId, stepKey: input.stepKey, use: 'inventory.refresh', with: {}, target: input.target },
      timeoutMs: PROBE_TIMEOUT_MS,
      maximumAttempts: 2,
    });
    const inventory = inventoryOutputSchema.safeParse(answer);
    const seenUuid = inventory.success ? inventory.data.sections.system.productUuid : null;
    const seenMacs = inventory.success ? inventory.data.sections.nics.map((nic) => nic.mac) : [];
    if (!seenUuid || !sameProductUuid(seenUuid, node.productUuid as string) || !seenMacs.includes(mac)) {
      throw new IronflowError(
        'DRIVER_ERROR',
        `machine-identity-mismatch: the ramdisk that joined reports product UUID ${seenUuid ?? 'none'} and NICs ${seenMacs.join(', ') || 'none'}, not the enrolled ${node.productUuid} with the discovered ${mac}`,
        { reason: 'machine-identity-mismatch' },
      );
    }
  }
}
