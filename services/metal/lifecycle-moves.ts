// What the node lifecycle applies when a state's workflow ends: `complete` on success,
// `fail` on failure or cancellation (failedFrom, lastError, maintenance on), through the
// same state table and guarded update as the verbs. An outcome for a workflow the node no
// longer expects (it was aborted or superseded) changes nothing.
import type { Node } from '../../generated/prisma-sqlite/client';
import type { Db, Tx } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { stateOutcomes } from '../metrics/registry';
import { normalizeMac } from '../../core/mac';
import { sameProductUuid } from '../../core/product-uuid';
import type { JsonValue } from '../../core/plan';
import { inspectOobOutputSchema, inventoryOutputSchema, type NodeInventory } from '../../core/schemas/inventory';
import { completeMove, failMove } from '../../core/provision-states';
import { applyAcceptance } from './adopt';
import { holdOnFailure } from './maintenance';
import { commitMove, findMetalNode, isAgentless, stateOf } from './transition';

export interface StateOutcome {
  nodeId: string;
  workflowId: string;
  outcome: 'succeeded' | 'failed';
  /** Step outputs of the provision result, by step key. */
  outputs?: Record<string, JsonValue>;
  error?: { code: string; message: string };
  /** A deploy profile's role. */
  role?: 'host' | 'dedicated';
  /** A deploy's desired host state (activities/deploy-host-spec.ts fills it, not the workflow). */
  hostSpec?: Record<string, JsonValue>;
  /** How many disk.wipe results were verified (activities/attested-outcome.ts sets it after checking each attestation; the workflow never does). */
  verifiedWipes?: number;
}

export interface AppliedOutcome {
  applied: boolean;
  state: string | null;
}

type Obj = Record<string, JsonValue>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const outputsOf = (outputs: Record<string, JsonValue> | undefined): Obj[] => Object.values(outputs ?? {}).filter(isObj);

/** Out-of-band facts (inspect.oob: macs, productUuid, arch, ips) and the ramdisk's inventory (inventory.refresh: its sections), each read by its step's schema. */
function identityFacts(node: Node, outputs: Obj[]): { data: Partial<Node>; mismatch?: string } {
  const macs = new Set(Array.isArray(node.macs) ? (node.macs as string[]) : []);
  const ips = new Set<string>();
  const data: Partial<Node> = {};
  let mismatch: string | undefined;
  let inventory: NodeInventory | undefined;
  for (const out of outputs) {
    const oob = inspectOobOutputSchema.safeParse(out);
    if (oob.success) {
      if (oob.data.arch) data.arch = oob.data.arch;
      for (const m of oob.data.macs) if (normalizeMac(m)) macs.add(normalizeMac(m) as string);
      if (oob.data.productUuid && !node.productUuid) data.productUuid = oob.data.productUuid.toLowerCase();
      for (const ip of oob.data.ips) ips.add(ip);
    }
    const inventoried = inventoryOutputSchema.safeParse(out);
    if (inventoried.success) {
      const { sections } = inventoried.data;
      inventory = { ...sections, ips: [] };
      for (const nic of sections.nics) if (nic.ip) ips.add(nic.ip);
      const seen = sections.system.productUuid;
      const enrolled = node.productUuid ?? (data.productUuid as string | undefined);
      if (seen && enrolled && !sameProductUuid(seen, enrolled))
        mismatch = `machine-identity-mismatch: the ramdisk reports product UUID ${seen}, the node was enrolled as ${enrolled}`;
    }
  }
  data.macs = [...macs] as unknown as Node['macs'];
  if (macs.size > 0 && node.macSource === null) data.macSource = 'inspection';
  if (inventory) data.inventory = { ...inventory, ips: [...ips] } as unknown as Node['inventory'];
  else if (ips.size > 0) data.inventory = { ...((node.inventory as object | null) ?? {}), ips: [...ips] } as unknown as Node['inventory'];
  return { data, ...(mismatch ? { mismatch } : {}) };
}

/** A release reaches ready only with a wipe whose node-signed result was verified (core/attestations) and read back. */
function wipeVerified(node: Node, outcome: StateOutcome): boolean {
  return node.releaseWipe !== 'none' && (outcome.verifiedWipes ?? 0) > 0;
}

async function fail(tx: Tx, node: Node, error: { code: string; message: string }): Promise<Node> {
  const move = failMove(stateOf(node));
  const hold = await holdOnFailure(tx, node, `${move.failedFrom} failed: ${error.code}: ${error.message}`, undefined);
  return commitMove(tx, node, move, { data: { failedFrom: move.failedFrom, lastError: error, ...hold }, event: { error } });
}

export async function applyStateOutcome(db: Db, outcome: StateOutcome): Promise<AppliedOutcome> {
  // Counted once the move is committed; an ignored (stale) outcome is not a state's end.
  let endedState = null as string | null;
  const applied = await db.$transaction(async (tx): Promise<AppliedOutcome> => {
    const node = await findMetalNode(tx, undefined, outcome.nodeId);
    if (node.workflowId !== outcome.workflowId) return { applied: false, state: node.provisionState };
    endedState = node.provisionState;
    if (node.provisionState === 'adopting') return { applied: true, state: (await applyAcceptance(tx, node, outcome)).provisionState };
    if (outcome.outcome === 'failed') {
      const moved = await fail(tx, node, outcome.error ?? { code: 'INTERNAL', message: 'the workflow failed' });
      return { applied: true, state: moved.provisionState };
    }
    const state = node.provisionState;
    const outputs = outputsOf(outcome.outputs);
    let data: Partial<Node> = {};
    if (state === 'enrolling' || state === 'inspecting' || state === 'commissioning') {
      const facts = identityFacts(node, outputs);
      if (facts.mismatch) return { applied: true, state: (await fail(tx, node, { code: 'DRIVER_ERROR', message: facts.mismatch })).provisionState };
      data = facts.data;
      if (state === 'commissioning') data.power = 'off';
    }
    let verified = false;
    if (state === 'releasing') {
      verified = wipeVerified(node, outcome);
      if (!verified && (await isAgentless(tx, node.poolId))) {
        // Agentless machines cannot attest a wipe: released, and said so.
        verified = true;
        await appendEvent(tx, {
          tenantId: node.tenantId,
          type: 'node.release.unverified',
          subjectId: node.id,
          data: { workflowId: node.workflowId, wipe: node.releaseWipe },
        });
      }
      data = { role: 'machine', deployProfile: null as unknown as Node['deployProfile'], power: 'off' };
    }
    if (state === 'deploying')
      data = { role: outcome.role ?? 'host', power: 'on', ...(outcome.hostSpec ? { hostSpec: outcome.hostSpec as Node['hostSpec'] } : {}) };
    if (state === 'retiring') data = { bmcCredentialsRef: null, power: 'off' };
    let move;
    try {
      move = completeMove(stateOf(node), { wipeVerified: verified });
    } catch (err) {
      if (err instanceof IronflowError && err.code === 'UNVERIFIED_WIPE') {
        const moved = await fail(tx, node, { code: 'UNVERIFIED_WIPE', message: err.message });
        return { applied: true, state: moved.provisionState };
      }
      throw err;
    }
    const moved = await commitMove(tx, node, move, { data, event: { workflowId: outcome.workflowId, outcome: 'complete' } });
    return { applied: true, state: moved.provisionState };
  });
  if (applied.applied && endedState) stateOutcomes.inc({ state: endedState, move: applied.state === 'failed' ? 'fail' : 'complete' });
  return applied;
}
