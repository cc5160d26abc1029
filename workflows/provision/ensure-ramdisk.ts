// metal.ensureRamdisk as workflow code (spec 001, "Booting a machine into the ramdisk"):
// nothing when the machine's ramdisk answers; otherwise one of the site's boot slots
// (boot-slot.ts: the run queues while they are all held), then a one-time PXE boot through the BMC,
// one boot entry per known PXE MAC (each with a fresh single-use discovery token, by
// reference), power off and on, and a wait for the ramdisk's agentJoined signal. The entries
// and BMC commands go to a connected site agent of the machine's site (routing.ts) as one
// command, boot.pxeBoot, under the step's key, so their BMC operation ids
// (<workflow>/<step key>/<command>) are the same on a retry or another agent and a command is
// never sent twice. The database work is short leaf activities (activities/ramdisk-boot.ts): no
// worker slot is held while a machine boots. boot.cleanUp (a site step) removes the entries and
// the tokens.
// A machine enrolled with a product UUID and no MACs (an IPMI BMC names no NICs) is first
// PXE-booted with no entry, so the site agent sees it: the step matches the sighting to the
// machine and waits for metal.confirmMac, or binds it at once on a pool that trusts its
// provisioning network, then checks the identity of the ramdisk that joined. A join whose
// signal was lost is found by the ramdisk's session (join-wait.ts).
import { ActivityFailure, ApplicationFailure, condition } from '@temporalio/workflow';
import type { RamdiskBootActivities, RamdiskBootNode } from '../../activities/ramdisk-boot';
import type { BootEntry } from '../../core/boot/boot-entry';
import { waitedFor } from '../../core/deadlines';
import type { JsonObject, PlanStep } from '../../core/plan';
import { sameProductUuid } from '../../core/product-uuid';
import { activitySummary } from '../../core/workflow-summaries';
import { ramdiskTaskQueue, sharedRamdiskQueue } from './ramdisk-queue';
import { activityOn, commandRetry, siteCommand } from './routing';
import { stepInput, type RunContext } from './run-context';
import type { WorkflowStepAttempt } from './workflow-steps';
import { controlLeaves } from './control-leaves';
import { awaitJoin } from './join-wait';
import { startedWith, takesPatch } from '../patches';
import { nonRetryableCodes } from '../../core/errors';

const leaves = controlLeaves<RamdiskBootActivities>();

/** How often PXE discovery looks for the machine's sighting (an operator's confirmMac wakes it at once). */
const DISCOVERY_POLL_MS = 2000;
/** A ramdisk believed connected must pick up the probe this soon, or it is not there. */
const PROBE_PICKUP_MS = 5_000;
const PROBE_TIMEOUT_MS = 30_000;
/** The SDK's failure type for an activity its worker does not register: here, a site agent older than boot.pxeBoot. */
const NOT_SERVED = 'NotFoundError';

const isNotServed = (err: unknown): boolean => err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === NOT_SERVED;

/**
 * The inventory schemas, evaluated the first time a run checks a discovered identity: every
 * run evaluates its workflow modules anew, and building zod and these schemas cost each run
 * ~5 ms of CPU though only PXE discovery reads them. Eager: part of the bundle, no chunk.
 */
const inventorySchemas = () => import(/* webpackMode: "eager" */ '../../core/schemas/inventory');

export interface EnsureRamdiskResult {
  booted: boolean;
  /** Already connected: nothing was done. */
  alreadyConnected: boolean;
  macs: string[];
  /** The site agent that sent the boot. */
  agentNodeId: string | null;
}

export async function ensureRamdisk(
  ctx: RunContext,
  step: PlanStep,
  { attempt, deadline: attemptDeadline }: WorkflowStepAttempt,
): Promise<EnsureRamdiskResult> {
  const { run, target } = ctx;
  const { status } = run;
  const { nodeId } = target;

  /** inventory.refresh on the ramdisk serving `queue` (read-only: a probe, or the identity check). */
  const askRamdisk = (queue: string, pickupMs: number, maximumAttempts: number) => {
    if (status.step) status.step.taskQueue = queue;
    run.showDetails();
    return activityOn(
      { activity: 'inventory.refresh', timeoutMs: PROBE_TIMEOUT_MS, retry: commandRetry(maximumAttempts) },
      queue,
      activitySummary(step.key, 'inventory.refresh', queue),
      pickupMs,
    )({ ...stepInput(ctx, step), use: 'inventory.refresh', with: {} });
  };

  // A session says a ramdisk ran a moment ago, not that it runs now (a kexec, an abort or a
  // crash end it without a goodbye): ask it.
  const state = await leaves()['metal.ensureRamdisk.read']({ nodeId });
  if (state.ramdiskSession) {
    // A read recorded before queues per boot names no queue.
    const queue = state.ramdiskQueue ?? sharedRamdiskQueue(nodeId);
    try {
      await askRamdisk(queue, PROBE_PICKUP_MS, 1);
      run.useRamdiskQueue(queue);
      return { booted: false, alreadyConnected: true, macs: [], agentNodeId: null };
    } catch {
      // not there: boot it
    }
  }
  const node = state.node;
  // One of the site's boot slots before anything touches the machine; the step's time counts from the slot.
  const deadline = attemptDeadline + (await ctx.bootSlot.take(node.siteId));

  let agentNodeId: string | null = null;
  /** A site command under the step's key (`round` keeps the discovery boot's operation ids apart from the ramdisk boot's). */
  const command = async (use: string, withInput: JsonObject, round?: string, nonRetryable?: readonly string[]) => {
    const sent = await siteCommand(ctx, step, deadline, {
      use,
      with: withInput,
      ...(round ? { stepKey: `${step.key}:${round}` } : {}),
      ...(nonRetryable ? { nonRetryable } : {}),
    });
    agentNodeId = sent.agent.agentNodeId;
  };

  /**
   * The boot's commands one by one (runs begun before boot.pxeBoot, and a site agent older than
   * it): the entries, then power off, one-time PXE, power on. Answers when the power-on was sent
   * (workflow time).
   */
  const pxeBootOneByOne = async (entries: BootEntry[], round?: string): Promise<number> => {
    if (entries.length > 0) await command('boot.prepareRamdisk', { entries: entries as unknown as JsonObject[] });
    await command('power.setPower', { action: 'off' }, round);
    // Whatever ramdisk the machine ran is gone now: forget its session.
    await leaves()['metal.ensureRamdisk.forgetSession']({ nodeId });
    await command('management.setBootDevice', { device: 'pxe', persistent: false }, round);
    const sentAt = Date.now();
    await command('power.setPower', { action: 'on' }, round);
    await leaves()['metal.ensureRamdisk.poweredOn']({ nodeId });
    return sentAt;
  };

  /**
   * Boots the machine into a one-time PXE boot with `entries` written first: one site command
   * (boot.pxeBoot: power off, one-time PXE, power on, each once per operation id, as Ironic
   * reboots rather than cycling), a quarter of the tasks and routings four commands cost.
   * Answers when the boot was sent (workflow time).
   */
  const pxeBoot = async (entries: BootEntry[], round?: string): Promise<number> => {
    if (takesPatch('site-pxe-boot')) {
      const sentAt = Date.now();
      try {
        await command('boot.pxeBoot', { entries: entries as unknown as JsonObject[] }, round, [...nonRetryableCodes, NOT_SERVED]);
        // The ramdisk that ran before the power-off is gone: forget its session, not one that joined since.
        await leaves()['metal.ensureRamdisk.forgetSession']({ nodeId, lastSeenBefore: new Date(sentAt).toISOString() });
        await leaves()['metal.ensureRamdisk.poweredOn']({ nodeId });
        return sentAt;
      } catch (err) {
        if (!isNotServed(err)) throw err;
      }
    }
    return pxeBootOneByOne(entries, round);
  };

  let macs = node.macs;
  let discovered = false;
  if (macs.length === 0) {
    if (!node.usableProductUuid) {
      throw ApplicationFailure.create({
        message: `node ${nodeId} has no known PXE MAC and no usable product UUID to discover one by: enroll it with --mac or --product-uuid, or confirm its MAC (ironflow metal confirm-mac)`,
        type: 'INVALID_STATE',
        nonRetryable: true,
        details: [{ nodeId, reason: 'no-known-mac' }],
      });
    }
    const learned = await learnPxeMac(ctx, node, await pxeBoot([], 'discovery'), deadline);
    macs = learned.macs;
    discovered = learned.discovered;
  }

  const entries: BootEntry[] = await leaves()['metal.ensureRamdisk.bootEntries']({ nodeId, workflowId: ctx.workflowId, macs });
  // Joins count from before the boot: the ramdisk it starts may join before the power-on's answer arrives.
  run.takeJoins('ramdisk');
  const poweredOnAt = await pxeBoot(entries);
  await leaves()['metal.ensureRamdisk.recordBoot']({ tenantId: node.tenantId, nodeId, workflowId: ctx.workflowId, agentNodeId: agentNodeId ?? '', macs });

  const joinWait = `the ramdisk of node ${nodeId} to join after PXE boot ${attempt} (PXE MACs ${macs.join(', ')})`;
  run.waitFor(joinWait);
  status.progress = { until: new Date(deadline).toISOString() };
  const joined = await awaitJoin(
    ctx,
    {
      arrived: () => run.untakenJoins('ramdisk') > 0,
      // Any ramdisk but the one that ran before the boot: each boot's serves a queue of its own.
      isNew: (connection) => connection.role === 'ramdisk' && connection.taskQueue !== state.ramdiskQueue,
      deadline,
    },
    startedWith('join-recheck'),
  );
  if (!joined) {
    // Not retried: a retry reuses this attempt's power commands (their operation ids) and would only wait again.
    throw ApplicationFailure.create({
      message: `${waitedFor(Date.now() - poweredOnAt, joinWait)}: it never joined; check the machine's console (did it PXE-boot from the site agent?) and the site agent's boot log`,
      type: 'DRIVER_ERROR',
      nonRetryable: true,
      details: [{ nodeId, reason: 'join-deadline', macs }],
    });
  }
  run.takeJoins('ramdisk');
  run.waitFor(null);
  status.progress = null;
  if (discovered) await checkDiscoveredIdentity(node, macs[0] as string, await askRamdisk(await ramdiskTaskQueue(ctx), PROBE_TIMEOUT_MS, 2));
  return { booted: true, alreadyConnected: false, macs, agentNodeId };
}

/**
 * After the discovery boot: the MAC an operator confirms (any door), or the candidate itself on
 * a pool with policy.trustProvisioningNetwork. The wait names its reason (`not-seen`,
 * `ambiguous`, …, `metal.confirmMac`); an operator's confirmMac wakes it at once.
 */
async function learnPxeMac(ctx: RunContext, node: RamdiskBootNode, powerCommandAt: number, deadline: number): Promise<{ macs: string[]; discovered: boolean }> {
  const { run, target } = ctx;
  let waiting = 'not-seen';
  for (;;) {
    const confirmedBefore = run.status.confirmedMac; // read before the look: a confirmation during it ends the wait below
    const seen = await leaves()['metal.ensureRamdisk.discoverMac']({
      nodeId: target.nodeId,
      powerCommandAt: new Date(powerCommandAt).toISOString(),
      trusted: node.trustProvisioningNetwork,
    });
    if (seen.kind === 'known') return seen;
    if (seen.kind === 'changed') continue;
    if (Date.now() >= deadline) {
      const operator = waiting === 'metal.confirmMac';
      const what = operator
        ? `an operator to confirm node ${target.nodeId}'s PXE MAC (metal.confirmMac)`
        : `node ${target.nodeId}'s PXE boot to be seen by a site agent after its power-on (${waiting})`;
      throw ApplicationFailure.create({
        message: waitedFor(Date.now() - powerCommandAt, what),
        type: operator ? 'INVALID_STATE' : 'DRIVER_ERROR',
        nonRetryable: true,
        details: [{ nodeId: target.nodeId, reason: 'discovery-deadline' }],
      });
    }
    waiting = seen.reason;
    if (run.status.waitingFor !== waiting) run.waitFor(waiting);
    await condition(() => run.status.confirmedMac !== confirmedBefore, Math.min(DISCOVERY_POLL_MS, Math.max(1, deadline - Date.now())));
  }
}

/**
 * policy.trustProvisioningNetwork's backstop: any host on the network could have claimed the
 * machine's UUID from its own MAC. Before anything is written, the ramdisk that joined must
 * report a spelling of the enrolled UUID and a NIC with the bound MAC.
 */
async function checkDiscoveredIdentity(node: RamdiskBootNode, mac: string, answer: unknown): Promise<void> {
  const { inventoryOutputSchema } = await inventorySchemas();
  const inventory = inventoryOutputSchema.safeParse(answer);
  const seenUuid = inventory.success ? inventory.data.sections.system.productUuid : null;
  const seenMacs = inventory.success ? inventory.data.sections.nics.map((nic) => nic.mac) : [];
  if (!seenUuid || !node.productUuid || !sameProductUuid(seenUuid, node.productUuid) || !seenMacs.includes(mac)) {
    throw ApplicationFailure.create({
      message: `machine-identity-mismatch: the ramdisk that joined reports product UUID ${seenUuid ?? 'none'} and NICs ${seenMacs.join(', ') || 'none'}, not the enrolled ${node.productUuid} with the discovered ${mac}`,
      type: 'DRIVER_ERROR',
      nonRetryable: true,
      details: [{ reason: 'machine-identity-mismatch' }],
    });
  }
}
