// The destructive-batch quorum end to end, on the real site agent, control-plane worker and
// ramdisk (docs/quorum.md). The site agent pins the tenant's policy ([quorum]
// pinned_policies; its boot script hands the pin to ramdisks as if.quorum). A quorum tenant's
// inspection waits for its one-node batch without touching the BMC, 1 of 2 approvals is not
// enough, 2 are; the site agent and the ramdisk refuse, when the control plane itself sends
// them, commands with no batch, too few, forged, duplicated or unknown signatures, an expired
// batch, a policy they do not pin, another node or a command kind outside the batch. Effects
// are checked at the hardware (BMC command log, disk) and in the events.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Machine } from '../../agent/emulator/machine';
import type { SiteAgent } from '../../agent/site/main';
import { newId } from '../../services/ids';
import type { StepInput } from '../../core/plan';
import { batchBundle } from '../../services/quorum/batch-store';
import {
  batchDigest,
  policyDigest,
  signBatch,
  signBatchRefusal,
  type BatchDocument,
  type PolicyDocument,
  type QuorumBundle,
} from '../../services/quorum/documents';
import type { BatchViewAnswer } from '../../services/schemas/quorum';
import type { MetalNodeView } from '../../core/schemas/metal';
import type { ProvisionStatus } from '../../core/plan';
import { activeAgent, until } from '../helpers/boot-site';
import { startE2eSite, type E2eSite } from '../helpers/e2e-site';
import { siteAgentFixture } from '../helpers/site-agent';
import { sessionQueue } from '../helpers/provision';

const approverKeys = ['alice', 'bob', 'carol'].map((id) => ({ id, ...generateKeyPairSync('ed25519') }));
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
const approvers = approverKeys.map((a) => ({ id: a.id, name: `Approver ${a.id}`, publicKeyPem: pem(a.publicKey) }));
const policy: PolicyDocument = { v: 1, tenantId: 'root', required: 2, approvers };
const keyOf = (id: string) => approverKeys.find((a) => a.id === id)?.privateKey as KeyObject;

let site: E2eSite;
let siteAgent: SiteAgent;
let nodeId: string;
let machine: Machine;

type Event = { type: string; subjectId: string | null; data: Record<string, unknown> };
const events = async (prefix: string): Promise<Event[]> =>
  (await site.t.root.call<{ events: Event[] }>('GET', `/v1/events?tenantId=root&type=${prefix}&limit=500`)).events;
const batchOf = (state: string) =>
  until(
    `the ${state} batch of ${nodeId}`,
    () => site.t.cp.db.quorumBatch.findFirst({ where: { subject: { startsWith: `node:${nodeId}:${state}:` } } }).then((b) => b ?? undefined),
    60_000,
  );
const approve = async (batchId: string, approverId: string) => {
  const shown = await site.t.root.call<BatchViewAnswer>('GET', `/v1/quorum/batches/${batchId}?tenantId=root`);
  return site.t.root.call<BatchViewAnswer>('POST', `/v1/quorum/batches/${batchId}/approvals`, {
    tenantId: 'root',
    approverId,
    signature: signBatch(batchDigest(shown.document), keyOf(approverId)),
  });
};
const status = (workflowId: string) => site.t.cp.temporal.workflow.getHandle(workflowId).query<ProvisionStatus>('status');
const bmcCommands = (): string[] => [...(site.fleet.bmc.get(machine.description.id)?.commands ?? [])];
const bmcTouched = () => bmcCommands().filter((c) => c.startsWith('reset:') || c.startsWith('boot:'));

/** Sends one command to an agent's queue as the control plane does (an agentCommand run), with the bundle given. */
async function send(taskQueue: string, activity: string, withInput: StepInput['with'], quorum: unknown, target = nodeId): Promise<unknown> {
  const input = {
    workflowId: `quorum-probe-${newId('event')}`,
    stepKey: 'probe',
    use: activity,
    with: withInput,
    target: { tenantId: 'root', nodeId: target, siteId: site.siteId, provisionState: 'ready', labels: {} },
    ...(quorum ? { quorum } : {}),
  };
  return site.t.cp.temporal.workflow.execute('agentCommand', {
    taskQueue: site.t.cp.config.controlQueue,
    workflowId: input.workflowId,
    args: [{ taskQueue, activity, input, timeoutMs: 30_000, scheduleToStartMs: 30_000, maximumAttempts: 1 }],
  });
}

/** The refusal's reason (details.reason of the agent's PERMISSION_DENIED). */
async function refusal(sent: Promise<unknown>): Promise<string> {
  const error = await sent.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  let cause = (error as WorkflowFailedError).cause as (Error & { cause?: Error; type?: string; details?: unknown[] }) | undefined;
  while (cause?.cause) cause = cause.cause as typeof cause;
  expect(cause?.type).toBe('PERMISSION_DENIED');
  return String((cause?.details?.[0] as { reason?: string } | undefined)?.reason);
}

/** A document signed by these approvers (the test plays a control plane holding their keys). */
const signedBy = (document: BatchDocument, ids: string[]) => ids.map((id) => ({ approverId: id, signature: signBatch(batchDigest(document), keyOf(id)) }));

beforeAll(async () => {
  site = await startE2eSite('e2e-quorum', {
    startSiteAgent: async (boot) => {
      // The site's operator pins the tenant's policy by its sha256 (what `ironflow batches policy show` prints).
      const fixture = siteAgentFixture(boot.t.cp.url, { boot: ['', '[quorum]', `pinned_policies = ["${policyDigest(policy)}"]`] });
      siteAgent = await fixture.start({ IRONFLOW_JOIN_TOKEN: boot.siteToken });
      await activeAgent(siteAgent);
      return {
        dataDir: siteAgent.identity.dataDir,
        bootServerUrl: () => siteAgent.bootServer?.url,
        lines: () => fixture.lines,
        kill: () => undefined,
        restart: () => Promise.reject(new Error('not restarted here')),
        stop: () => siteAgent.stop(),
      };
    },
  });
  const set = await site.t.root.call<{ sha256: string }>('PUT', '/v1/quorum/policy', { tenantId: 'root', required: 2, approvers });
  expect(set.sha256).toBe(policyDigest(policy));
}, 120_000);

afterAll(async () => {
  await site?.close();
});

describe('the destructive-batch quorum on the real agents', () => {
  it('inspection waits for its one-node batch without touching the BMC; 1 of 2 approvals is not enough, 2 are; commissioning likewise', async () => {
    const added = await site.fleet.add({ diskBytes: 8 * 1024 * 1024 });
    machine = added.machine;
    const enrolled = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: site.poolId,
      bmc: { driver: 'redfish', address: added.bmc.address, username: added.bmc.username, password: added.bmc.password },
    });
    nodeId = enrolled.nodeId;

    const inspecting = await batchOf('inspecting');
    expect(inspecting).toMatchObject({ kind: 'workflow', status: 'pending' });
    expect(inspecting.reason).toContain(`inspecting on ${nodeId}`);
    await until(
      'the inspection to wait for its batch',
      async () => (await status(inspecting.subject)).waitingFor?.includes(`approval of batch ${inspecting.id} (0/2)`),
      30_000,
    );
    expect(bmcTouched()).toEqual([]);

    await approve(inspecting.id, 'alice');
    await until('the wait to count 1 of 2', async () => (await status(inspecting.subject)).waitingFor?.includes(`(1/2)`), 30_000);
    expect(bmcTouched()).toEqual([]);
    expect(machine.state).toBe('off');

    expect((await approve(inspecting.id, 'bob')).status).toBe('approved');
    const commissioning = await batchOf('commissioning');
    expect(bmcTouched().length).toBeGreaterThan(0); // the inspection's PXE boot went out once approved
    await approve(commissioning.id, 'carol');
    await approve(commissioning.id, 'alice');
    await site.settle(nodeId, 'ready', 150_000);

    await until('the batch events', async () => {
      const seen = await events('quorum.');
      const count = (type: string) => seen.filter((e) => e.type === type).length;
      return count('quorum.batch.requested') >= 2 && count('quorum.batch.approval') >= 4 && count('quorum.batch.approved') >= 2 ? seen : undefined;
    });
    expect(await events('quorum.refused')).toEqual([]);
  }, 200_000);

  it('the site agent refuses what the control plane sends outside an approved batch, and the BMC never hears of it', async () => {
    const row = await site.t.cp.db.quorumBatch.findFirstOrThrow({ where: { subject: { startsWith: `node:${nodeId}:commissioning:` } } });
    const approved: QuorumBundle = await batchBundle(site.t.cp.db, row, nodeId);
    const { document } = approved;
    const queue = siteAgent.identity.current.temporal.taskQueue;
    const before = bmcCommands();
    const powerOn = (quorum: unknown, target?: string) => send(queue, 'power.setPower', { action: 'on' }, quorum, target);

    expect(await refusal(powerOn(undefined))).toBe('quorum-missing');
    expect(await refusal(powerOn({ ...approved, signatures: approved.signatures.slice(0, 1) }))).toBe('quorum-signatures'); // M-1
    const forged = { approverId: 'bob', signature: signBatch(batchDigest({ ...document, reason: 'something else' }), keyOf('bob')) };
    expect(await refusal(powerOn({ ...approved, signatures: [approved.signatures[0], forged] }))).toBe('quorum-signatures');
    expect(await refusal(powerOn({ ...approved, signatures: [approved.signatures[0], approved.signatures[0]] }))).toBe('quorum-signatures'); // duplicate
    const mallory = generateKeyPairSync('ed25519');
    expect(
      await refusal(
        powerOn({
          ...approved,
          signatures: [...approved.signatures, { approverId: 'mallory', signature: signBatch(batchDigest(document), mallory.privateKey) }],
        }),
      ),
    ).toBe('quorum-signatures');
    // A policy of the control plane's own making, with its own approvers, signed by them: not pinned.
    const rogue: PolicyDocument = {
      v: 1,
      tenantId: 'root',
      required: 1,
      approvers: [{ id: 'mallory', name: 'Mallory', publicKeyPem: pem(mallory.publicKey) }],
    };
    const rogueDoc = { ...document, policySha256: policyDigest(rogue) };
    expect(
      await refusal(
        powerOn({
          ...approved,
          policy: rogue,
          document: rogueDoc,
          signatures: [{ approverId: 'mallory', signature: signBatch(batchDigest(rogueDoc), mallory.privateKey) }],
        }),
      ),
    ).toBe('quorum-policy-not-pinned');
    // Properly signed by two approvers, but expired.
    const expired = { ...document, expiresAt: new Date(Date.now() - 1000).toISOString() };
    expect(await refusal(powerOn({ ...approved, document: expired, signatures: signedBy(expired, ['alice', 'bob']) }))).toBe('quorum-expired');
    // The approved batch itself, for another node, and for a kind it does not allow.
    expect(await refusal(powerOn(approved, newId('node')))).toBe('quorum-out-of-scope');
    expect(await refusal(send(queue, 'bmc.power', { action: 'on' }, approved))).toBe('quorum-out-of-scope');
    // metal.ensureRamdisk's boot in one command is checked for what it sends the BMC.
    expect(await refusal(send(queue, 'boot.pxeBoot', { entries: [] }, undefined))).toBe('quorum-missing');
    expect(await refusal(send(queue, 'boot.pxeBoot', { entries: [] }, approved, newId('node')))).toBe('quorum-out-of-scope');

    expect(bmcCommands()).toEqual(before);
    expect(machine.state).toBe('off');
    const refused = await until('the refusal events', async () => {
      const seen = await events('quorum.refused');
      return seen.length >= 8 ? seen : undefined;
    });
    expect(refused.every((e) => e.data.source === 'site' && e.subjectId === nodeId)).toBe(true);
    expect(new Set(refused.map((e) => e.data.reason))).toEqual(
      new Set(['quorum-missing', 'quorum-signatures', 'quorum-policy-not-pinned', 'quorum-expired', 'quorum-out-of-scope']),
    );
  }, 120_000);

  it('a deploy runs once approved, and its ramdisk refuses a wipe its batch does not allow even when the control plane sends it', async () => {
    const image = randomBytes(1024 * 1024 + 5);
    const { path: imagePath } = await site.registerImage('quorum-os@1', image);
    await site.deployProfile('quorum-os-host', 'quorum-os@1');
    const hold = site.holdImage(imagePath);
    await site.verb(nodeId, 'deploy', { profileId: 'quorum-os-host', profileVersion: 1 });
    const deploying = await batchOf('deploying');
    expect(deploying.reason).toContain('quorum-os-host');
    await approve(deploying.id, 'bob');
    await approve(deploying.id, 'carol');
    await hold.reached; // the ramdisk is up and streaming the image
    const head = readFileSync(machine.diskPath).subarray(1024 * 1024, 1024 * 1024 + 4096);

    const approved = await batchBundle(site.t.cp.db, await site.t.cp.db.quorumBatch.findUniqueOrThrow({ where: { id: deploying.id } }), nodeId);
    expect(approved.document.commands).not.toContain('disk.wipe');
    // The control plane sends it where the workflow would: the queue of the machine's running ramdisk, as its session names it.
    const ramdiskQueue = await sessionQueue(site.t.cp.db, nodeId);
    expect(await refusal(send(ramdiskQueue, 'disk.wipe', { mode: 'quick' }, approved))).toBe('quorum-out-of-scope');
    expect(await refusal(send(ramdiskQueue, 'disk.wipe', { mode: 'quick' }, undefined))).toBe('quorum-missing');
    expect(readFileSync(machine.diskPath).subarray(1024 * 1024, 1024 * 1024 + 4096)).toEqual(head);
    await until('the ramdisk refusal events', async () =>
      (await events('quorum.refused')).filter((e) => e.data.source === 'ramdisk').length >= 2 ? true : undefined,
    );

    hold.release();
    await site.settle(nodeId, 'deployed', 120_000);
  }, 180_000);

  it("an approver's refusal fails the run at once, with nothing sent to the BMC", async () => {
    const asked = await site.t.root.call<{ powerWorkflowId: string }>('POST', `/v1/metal/nodes/${nodeId}/power`, { tenantId: 'root', action: 'cycle' });
    const batch = await until(
      'the power batch',
      () => site.t.cp.db.quorumBatch.findFirst({ where: { subject: asked.powerWorkflowId } }).then((b) => b ?? undefined),
      30_000,
    );
    const before = bmcCommands();
    await site.t.root.call('POST', `/v1/quorum/batches/${batch.id}/refusals`, {
      tenantId: 'root',
      approverId: 'carol',
      signature: signBatchRefusal(batch.sha256, keyOf('carol')),
      reason: 'change freeze',
    });
    const failed = await site.t.cp.temporal.workflow
      .getHandle(asked.powerWorkflowId)
      .result()
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(String((failed as { cause?: Error })?.cause?.message ?? failed)).toContain('refused by an approver');
    expect(bmcCommands()).toEqual(before);
  }, 60_000);

  it('metal power runs in a one-leaf batch of its own: the BMC hears nothing until two approvers signed', async () => {
    const asked = await site.t.root.call<{ powerWorkflowId: string }>('POST', `/v1/metal/nodes/${nodeId}/power`, { tenantId: 'root', action: 'off' });
    const batch = await until(
      'the power batch',
      () => site.t.cp.db.quorumBatch.findFirst({ where: { subject: asked.powerWorkflowId } }).then((b) => b ?? undefined),
      30_000,
    );
    const shown = await site.t.root.call<BatchViewAnswer>('GET', `/v1/quorum/batches/${batch.id}?tenantId=root`);
    expect(shown).toMatchObject({ kind: 'power', nodeCount: 1, commands: ['power.setPower'], states: ['power'] });
    await until(
      'the power run to wait for its batch',
      async () => (await status(asked.powerWorkflowId)).waitingFor?.includes(`approval of batch ${batch.id} (0/2)`),
      30_000,
    );
    const before = bmcCommands();
    expect(machine.state).not.toBe('off');
    await approve(batch.id, 'alice');
    await approve(batch.id, 'carol');
    await site.t.cp.temporal.workflow.getHandle(asked.powerWorkflowId).result();
    expect(
      bmcCommands()
        .slice(before.length)
        .filter((c) => c.startsWith('reset:')),
    ).toHaveLength(1);
    expect(machine.state).toBe('off');
  }, 60_000);
});
