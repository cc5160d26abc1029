// media.insert and media.eject on the site agent: Redfish virtual media where the BMC has
// it. An ISO the site's cache holds verified is handed to the BMC as a cache URL under a
// one-digest grant (2 h), so the BMC reads it from the site instead of its source. A BMC
// without virtual media is UNSUPPORTED for insert (metal then sanboots the cached ISO);
// eject also drops the machine's sanboot entries, and is a no-op for the BMC then.
import { z } from 'zod';
import { isIronflowError, parseWith } from '../../../core/errors';
import { siteMediaInsertWithSchema } from '../../../core/steps/metal';
import { runBmcCommand } from '../../bmc/commands';
import { withBmc } from '../bmc-access';
import { operationIdFor } from '../operation-id';
import type { SiteStep, SiteStepDeps } from './deps';

export function mediaInsertStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    const media = parseWith(siteMediaInsertWithSchema, input.with);
    const cached = media.sha256 ? deps.cachedMediaUrl?.(media.sha256) : undefined;
    return withBmc(deps, input, async (driver) => {
      const url = cached ?? media.url;
      const outcome = await runBmcCommand(deps.ledgerFor(input), driver, operationIdFor(input, 'media.insert'), { kind: 'media.insert', url });
      deps.log.info(outcome.reused ? 'virtual media already inserted; reused' : 'virtual media inserted', {
        nodeId: input.target.nodeId,
        workflowId: input.workflowId,
        fromCache: cached !== undefined,
      });
      return { inserted: true, fromCache: cached !== undefined, sent: !outcome.reused };
    });
  };
}

export function mediaEjectStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    parseWith(z.object({}).strict(), input.with);
    // The machine's media, whichever run inserted it: its sanboot entries go.
    const removed: string[] = [];
    for (const entry of deps.bootEntries.list().filter((e) => e.nodeId === input.target.nodeId && e.sanbootSha256 !== undefined)) {
      removed.push(...deps.bootEntries.removeWorkflow(entry.workflowId, [entry.mac]).map((e) => e.mac));
    }
    const ejected = await withBmc(deps, input, async (driver) => {
      if (!driver.virtualMedia) return false;
      try {
        await runBmcCommand(deps.ledgerFor(input), driver, operationIdFor(input, 'media.eject'), { kind: 'media.eject' });
        return true;
      } catch (error) {
        // A Redfish BMC without a virtual CD has nothing to eject (a release runs eject on every BMC).
        if (isIronflowError(error) && error.code === 'UNSUPPORTED') return false;
        throw error;
      }
    });
    deps.log.info('virtual media ejected', { nodeId: input.target.nodeId, workflowId: input.workflowId, ejected, sanbootEntriesRemoved: removed.length });
    return { ejected, sanbootEntriesRemoved: removed };
  };
}
