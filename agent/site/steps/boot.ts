// boot.prepareRamdisk and boot.cleanUp on the site agent. prepareRamdisk stores the boot
// entries metal.ensureRamdisk sends (one per PXE MAC, each naming its discovery token by
// reference) in the boot server's store (agent/boot/entries.ts). cleanUp drops the
// workflow's entries (or the listed MACs), forgets their tokens, and has the control plane
// revoke the workflow's discovery tokens and delete their stored bearers.
import { z } from 'zod';
import { prepareRamdiskSchema, type BootEntry } from '../../../core/boot/boot-entry';
import { macSchema } from '../../../core/schemas/common';
import { IronflowError, parseWith } from '../../../core/errors';
import type { StepInput } from '../../../core/plan';
import type { SiteStep, SiteStepDeps } from './deps';

const cleanUpWith = z.object({ macs: z.array(macSchema).max(64).optional() }).strict();

/** Stores `entries` for the boot server: only the step's own machine and workflow (boot.prepareRamdisk, boot.pxeBoot). */
export function writeBootEntries(deps: SiteStepDeps, input: StepInput, entries: BootEntry[]): { macs: string[]; notAfter: string | null } {
  const foreign = entries.find((e) => e.nodeId !== input.target.nodeId || e.workflowId !== input.workflowId);
  if (foreign)
    throw new IronflowError('INVALID_INPUT', `boot entry for ${foreign.mac} names another machine or workflow than the step's`, { path: 'with.entries' });
  deps.bootEntries.put(entries);
  deps.log.info('boot entries written', { nodeId: input.target.nodeId, workflowId: input.workflowId, macs: entries.map((e) => e.mac) });
  return { macs: entries.map((e) => e.mac), notAfter: entries[0]?.notAfter ?? null };
}

export function prepareRamdiskStep(deps: SiteStepDeps): SiteStep {
  return async (input) => writeBootEntries(deps, input, parseWith(prepareRamdiskSchema, input.with).entries);
}

export function cleanUpStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    const { macs } = parseWith(cleanUpWith, input.with);
    const removed = deps.bootEntries.removeWorkflow(input.workflowId, macs);
    deps.bootSecrets?.forget(removed);
    const released = await deps.client.signedPost<{ revoked: number; deleted: number }>(deps.signer, '/v1/agents/boot-secret/release', {
      nodeId: input.target.nodeId,
      workflowId: input.workflowId,
    });
    deps.log.info('boot entries removed', {
      nodeId: input.target.nodeId,
      workflowId: input.workflowId,
      removed: removed.length,
      tokensRevoked: released.revoked,
    });
    return { removed: removed.map((e) => e.mac), tokensRevoked: released.revoked, secretsDeleted: released.deleted };
  };
}
