// deploy.deploy, the control side (core/steps/metal.ts): resolve and verify the image before
// anything is sent, relay deploy.image to the ramdisk, then check the digest it wrote.
import { appendEvent } from '../services/events';
import { IronflowError } from '../core/errors';
import { resolveImageRef, verifyImageForUse } from '../services/images/catalog';
import { pinImageAtSite } from '../core/images/site-cache-report';
import type { JsonObject, StepInput, StepRelay } from '../core/plan';
import { parseOutput } from '../core/steps/outputs';
import { userDataSecretPurpose } from '../services/userdata/grant';
import type { ActivityDeps } from './deps';
import { asStep } from './step-failure';

/** Where userdata.render stores a workflow's rendered user data (its reference is what travels). */
function imageRefOf(input: StepInput): string {
  const image = input.with.image as { ref?: unknown } | undefined;
  if (!image || typeof image.ref !== 'string') {
    throw new IronflowError('INVALID_INPUT', 'deploy.deploy has no image: give the profile an image (image.ref) or the step with.image', {
      path: `${input.stepKey}.with.image`,
    });
  }
  return image.ref;
}

export function createDeployImageActivities(deps: ActivityDeps) {
  /** The image as the machine's owner sees it (its own first, then a public one), checked for use. */
  async function usableImage(input: StepInput) {
    const ref = imageRefOf(input);
    const row = await resolveImageRef(deps.db, input.target.tenantId, ref);
    if (!row) throw new IronflowError('NOT_FOUND', `image ${ref} is not in the catalog of tenant ${input.target.tenantId} (its own or a public one)`, { ref });
    if (row.kind === 'iso' || row.format === 'iso') {
      throw new IronflowError('INVALID_INPUT', `image ${ref} is an iso: deploy.deploy writes disk images; boot an iso with media.insert`, {
        path: `${input.stepKey}.with.image`,
        ref,
      });
    }
    return verifyImageForUse(deps.db, row.id);
  }

  return {
    async 'deploy.deploy'(input: StepInput): Promise<StepRelay> {
      return asStep(async () => {
        const image = await usableImage(input); // before anything is sent
        const userData = await deps.db.secret.findFirst({ where: { purpose: userDataSecretPurpose(input.workflowId) }, orderBy: { createdAt: 'desc' } });
        const send: JsonObject = {
          imageId: image.id,
          source: image.source,
          sha256: image.sha256,
          sizeBytes: Number(image.sizeBytes),
          format: image.format,
          compression: image.compression,
          ...(userData ? { userDataRef: userData.id } : {}),
        };
        // Pinned at the site while it streams: its agent caches it and never evicts it meanwhile.
        if (input.target.siteId) await pinImageAtSite(deps.db, { imageId: image.id, siteId: input.target.siteId, sizeBytes: image.sizeBytes });
        await appendEvent(deps.db, {
          tenantId: input.target.tenantId,
          type: 'node.deploy.image',
          subjectId: input.target.nodeId,
          data: { workflowId: input.workflowId, imageId: image.id, ref: image.ref, sha256: image.sha256 },
        });
        return { relayTo: { queue: 'ramdisk', activity: 'deploy.image', with: send, then: 'deploy.deploy.check' } };
      });
    },

    /** deploy.deploy's second half: the digest the ramdisk wrote must be the catalog's. */
    async 'deploy.deploy.check'(input: StepInput): Promise<{ imageId: string; sha256: string; bytesWritten: number | null }> {
      return asStep(async () => {
        const image = await usableImage(input);
        // The ramdisk's answer, read by deploy.image's output schema (core/steps/metal.ts).
        const answer = parseOutput('deploy.image', input.relayResult);
        if (!answer.success)
          throw new IronflowError(
            'DRIVER_ERROR',
            `the ramdisk's deploy.image answer is not one (${answer.problem}): the image was not checked`,
            { reason: 'result-malformed', imageId: image.id },
            { neverRetry: true },
          );
        if (answer.output.sha256 !== image.sha256) {
          // Not retried: checking the same answer again cannot make it the catalog's.
          throw new IronflowError(
            'DRIVER_ERROR',
            `the ramdisk wrote an image with digest ${answer.output.sha256}, the catalog says ${image.sha256} for ${image.ref}`,
            { reason: 'digest-mismatch', imageId: image.id },
            { neverRetry: true },
          );
        }
        if (input.target.siteId) await pinImageAtSite(deps.db, { imageId: image.id, siteId: input.target.siteId, sizeBytes: image.sizeBytes, pinForMs: 0 });
        return { imageId: image.id, sha256: image.sha256, bytesWritten: answer.output.bytesWritten ?? null };
      });
    },
  };
}
export type DeployImageActivities = ReturnType<typeof createDeployImageActivities>;
