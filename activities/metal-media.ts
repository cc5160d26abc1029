// media.insert's database work (the step itself is workflow code:
// workflows/provision/media-insert.ts), each one short call: resolve, verify and pin the
// catalog ISO at the machine's site; one look at the site cache's copy; the sanboot boot
// entries per PXE MAC; the event that says how the ISO was inserted.
import { BOOT_ENTRY_TTL_MS, bootArchitectureFor, type BootEntry } from '../core/boot/boot-entry';
import { IronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import { resolveImageRef, verifyImageForUse } from '../services/images/catalog';
import { pinImageAtSite } from '../core/images/site-cache-report';
import { macsOf } from '../services/metal/confirm-mac';
import type { ActivityDeps } from './deps';
import { asStep } from './step-failure';

export interface MediaInsertResult {
  imageId: string;
  sha256: string;
  via: 'virtual-media' | 'sanboot';
  macs: string[];
}

export interface MediaImage {
  imageId: string;
  ref: string;
  source: string;
  sha256: string;
}

export function createMetalMediaActivities(deps: ActivityDeps) {
  return {
    /** The ISO in the machine owner's catalog (its own or a public one), verified, and pinned at the site so its cache keeps it. */
    async 'media.insert.resolve'(input: { tenantId: string; siteId: string; stepKey: string; ref: string }): Promise<MediaImage> {
      return asStep(async () => {
        const row = await resolveImageRef(deps.db, input.tenantId, input.ref);
        if (!row)
          throw new IronflowError('NOT_FOUND', `image ${input.ref} is not in the catalog of tenant ${input.tenantId} (its own or a public one)`, {
            ref: input.ref,
          });
        if (row.kind !== 'iso' && row.format !== 'iso')
          throw new IronflowError('INVALID_INPUT', `image ${input.ref} is not an iso: media.insert boots ISOs; write disk images with deploy.deploy`, {
            path: `${input.stepKey}.with.image`,
            ref: input.ref,
          });
        const image = await verifyImageForUse(deps.db, row.id);
        await pinImageAtSite(deps.db, { imageId: image.id, siteId: input.siteId, sizeBytes: image.sizeBytes, pinForMs: BOOT_ENTRY_TTL_MS });
        return { imageId: image.id, ref: input.ref, source: image.source, sha256: image.sha256 };
      });
    },

    /** One look at the site cache's copy: ready, still coming, or failed (DRIVER_ERROR). */
    async 'media.insert.siteCache'(input: { imageId: string; siteId: string; ref: string }): Promise<{ ready: boolean; state: string | null }> {
      return asStep(async () => {
        const location = await deps.db.imageLocation.findUnique({ where: { imageId_siteId: { imageId: input.imageId, siteId: input.siteId } } });
        if (location?.state === 'failed')
          throw new IronflowError('DRIVER_ERROR', `site ${input.siteId} could not cache ${input.ref} (its bytes did not match or its source failed)`, {
            ref: input.ref,
            reason: 'cache-failed',
          });
        return { ready: location?.state === 'ready', state: location?.state ?? null };
      });
    },

    /** A sanboot boot entry per known PXE MAC of the machine. */
    async 'media.insert.sanbootEntries'(input: { nodeId: string; workflowId: string; sha256: string }): Promise<{ entries: BootEntry[]; macs: string[] }> {
      return asStep(async () => {
        const node = await deps.db.node.findUnique({ where: { id: input.nodeId } });
        if (!node || node.deletedAt) throw new IronflowError('NOT_FOUND', `node ${input.nodeId} not found`, { nodeId: input.nodeId });
        const macs = macsOf(node);
        if (!macs.length)
          throw new IronflowError('INVALID_STATE', `node ${node.id} has no known PXE MAC to sanboot the ISO on: inspect it out of band first`, {
            nodeId: node.id,
            reason: 'no-known-mac',
          });
        const notAfter = new Date(Date.now() + BOOT_ENTRY_TTL_MS).toISOString();
        const entries: BootEntry[] = macs.map((mac) => ({
          mac,
          productUuid: node.productUuid?.toLowerCase() ?? null,
          arch: bootArchitectureFor(node.arch, node.uefi),
          nodeId: node.id,
          workflowId: input.workflowId,
          sanbootSha256: input.sha256,
          notAfter,
        }));
        return { entries, macs };
      });
    },

    async 'media.insert.record'(input: {
      tenantId: string;
      nodeId: string;
      workflowId: string;
      imageId: string;
      via: MediaInsertResult['via'];
      macs: string[];
    }): Promise<void> {
      await appendEvent(deps.db, {
        tenantId: input.tenantId,
        type: 'node.media.inserted',
        subjectId: input.nodeId,
        data: { workflowId: input.workflowId, imageId: input.imageId, via: input.via, ...(input.via === 'sanboot' ? { macs: input.macs } : {}) },
      });
    },
  };
}
export type MetalMediaActivities = ReturnType<typeof createMetalMediaActivities>;
