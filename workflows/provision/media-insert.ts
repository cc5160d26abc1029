// media.insert as workflow code (spec 001, "Sanboot of a cached ISO"): the catalog ISO,
// resolved, verified and pinned at the machine's site (so the site agent caches it and never
// evicts it meanwhile), is inserted as virtual media by a site agent (its cached copy when it
// has one). A BMC without virtual media (IPMI, or a Redfish BMC without a virtual CD) answers
// UNSUPPORTED: then, once the site's cache holds the ISO verified, the agent gets a sanboot
// boot entry per PXE MAC and a one-time PXE boot, so the next power cycle boots the ISO from
// the cache. media.eject (a site step) undoes both. The database work is leaf activities
// (activities/metal-media.ts).
import { ActivityFailure, ApplicationFailure, sleep } from '@temporalio/workflow';
import type { MediaInsertResult, MetalMediaActivities } from '../../activities/metal-media';
import { waitedFor } from '../../core/deadlines';
import type { JsonObject, PlanStep } from '../../core/plan';
import { siteCommand } from './routing';
import type { RunContext } from './run-context';
import type { WorkflowStepAttempt } from './workflow-steps';
import { controlLeaves } from './control-leaves';

const leaves = controlLeaves<MetalMediaActivities>();

/** How often the sanboot path looks at the site cache's copy. */
const CACHE_POLL_MS = 1000;

const failureType = (err: unknown): string | undefined => {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  return failure instanceof ApplicationFailure ? (failure.type ?? undefined) : undefined;
};

export async function mediaInsert(ctx: RunContext, step: PlanStep, { deadline }: WorkflowStepAttempt): Promise<MediaInsertResult> {
  const { target, workflowId } = ctx;
  const ref = step.with.image;
  if (typeof ref !== 'string') {
    throw ApplicationFailure.create({
      message: 'media.insert takes a catalog ISO (with.image); a URL from an earlier step (fromStep) is not offered yet',
      type: 'UNSUPPORTED',
      nonRetryable: true,
      details: [{ path: `${step.key}.with` }],
    });
  }
  const image = await leaves()['media.insert.resolve']({ tenantId: target.tenantId, siteId: target.siteId, stepKey: step.key, ref });
  const record = (via: MediaInsertResult['via'], macs: string[]) =>
    leaves()['media.insert.record']({ tenantId: target.tenantId, nodeId: target.nodeId, workflowId, imageId: image.imageId, via, macs });

  try {
    await siteCommand(ctx, step, deadline, { use: 'media.insert', with: { url: image.source, sha256: image.sha256 } });
    await record('virtual-media', []);
    return { imageId: image.imageId, sha256: image.sha256, via: 'virtual-media', macs: [] };
  } catch (err) {
    if (failureType(err) !== 'UNSUPPORTED') throw err;
  }

  // No virtual media: sanboot the ISO from the site's cache once it holds it verified.
  const { entries, macs } = await leaves()['media.insert.sanbootEntries']({ nodeId: target.nodeId, workflowId, sha256: image.sha256 });
  const waiting = `site ${target.siteId}'s cache to hold ${ref} verified (sanboot of node ${target.nodeId})`;
  for (;;) {
    const cache = await leaves()['media.insert.siteCache']({ imageId: image.imageId, siteId: target.siteId, ref });
    if (cache.ready) break;
    if (Date.now() >= deadline)
      throw ApplicationFailure.create({
        message: `${waitedFor(step.timeoutMs, waiting)}: the copy is ${cache.state ?? 'not started'}`,
        type: 'DRIVER_ERROR',
        details: [{ ref, reason: 'cache-deadline' }],
      });
    if (ctx.run.status.waitingFor !== waiting) ctx.run.waitFor(waiting);
    await sleep(CACHE_POLL_MS);
  }
  ctx.run.waitFor(null);
  await siteCommand(ctx, step, deadline, { use: 'boot.prepareRamdisk', with: { entries: entries as unknown as JsonObject[] } });
  await siteCommand(ctx, step, deadline, { use: 'management.setBootDevice', with: { device: 'pxe', persistent: false } });
  await record('sanboot', macs);
  return { imageId: image.imageId, sha256: image.sha256, via: 'sanboot', macs };
}
