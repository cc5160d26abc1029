// boot.prepareRamdisk and boot.cleanUp: the machine's boot entry for this workflow, in
// the agent's boot entry store (two hours, as the spec's entries). The boot server that
// serves them (proxy DHCP, TFTP, iPXE scripts) is built on top of this store.
import { z } from 'zod';
import { parseWith } from '../../../core/errors';
import type { SiteStep, SiteStepDeps } from './deps';

const ENTRY_TTL_MS = 2 * 3_600_000;

export function prepareRamdiskStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    parseWith(z.object({}).strict(), input.with);
    const now = Date.now();
    const entry = { nodeId: input.target.nodeId, workflowId: input.workflowId, stepKey: input.stepKey, createdAt: new Date(now).toISOString(), notAfter: new Date(now + ENTRY_TTL_MS).toISOString() };
    deps.bootEntries.put(entry);
    deps.log.info('boot entry written', { nodeId: entry.nodeId, workflowId: entry.workflowId, notAfter: entry.notAfter });
    return { entry };
  };
}

export function cleanUpStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    parseWith(z.object({}).strict(), input.with);
    const removed = deps.bootEntries.removeWorkflow(input.workflowId);
    deps.log.info('boot entries removed', { workflowId: input.workflowId, removed });
    return { removed };
  };
}
