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
import type { NodeInventory } from '../../core/schemas/inventory';
import { parseOutput } from '../../core/steps/outputs';
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
  /** Each output's step `use`, by step key, from the state's plan (activities/attested-outcome.ts sets it; the workflow never does). */
  stepUses?: Record<string, string>;
}

export interface AppliedOutcome {
  applied: boolean;
  state: string | null;
}

/**
 * Out-of-band facts (inspect.oob: macs, productUuid, arch, ips) and the machine's inventory
 * (inventory.refresh: the sections its agent reported, stored as node.inventory), each output
 * read by the output schema of its step's use. An answer its schema refuses is a failure.
 */
function identityFacts(node: Node, outputs: Record<string, JsonValue>, stepUses: Record<string, string>): { data: Partial<Node>; mismatch?: string } {
  const macs = new Set(Array.isArray(node.macs) ? (node.macs as string[]) : []);
  const ips = new Set<string>();
  const data: Partial<Node> = {};
  let mismatch: string | undefined;
  let inventory: NodeInventory | undefined;
  for (const [key, out] of Object.entries(outputs)) {
    const use = stepUses[key];
    const malformed = (problem: string) => `the ${use} answer of ${key} is not one (${problem}): the machine's facts were not recorded`;
    if (use === 'inspect.oob') {
      const parsed = parseOutput(use, out);
      if (!parsed.success) {
        mismatch = malformed(parsed.problem);
        continue;
      }
      const oob = parsed.output;
      if (oob.arch) data.arch = oob.arch;
      for (const m of oob.macs) if (normalizeMac(m)) macs.add(normalizeMac(m) as string);
      if (oob.productUuid && !node.productUuid) data.productUuid = oob.productUuid.toLowerCase();
      for (const ip of oob.ips) ips.add(ip);
    } else if (use === 'inventory.refresh') {
      const parsed = parseOutput(use, out);
      if (!parsed.success) {
        mismatch = malformed(parsed.problem);
        continue;
      }
      const { sections } = parsed.output;
      inventory = { ...sections, ips: [] };
      if ('nics' in sections) for (const nic of sections.nics) if (nic.ip) ips.add(nic.ip);
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
    let data: Partial<Node> = {};
    if (state === 'enrolling' || state === 'inspecting' || state === 'commissioning') {
      const facts = identityFacts(node, outcome.outputs ?? {}, outcome.stepUses ?? {});
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
