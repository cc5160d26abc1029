// media.insert, the control side (spec 001, "Sanboot of a cached ISO"): resolves and verifies
// the catalog ISO in the machine owner's catalog, pins it at the machine's site (so the site
// agent caches it and never evicts it meanwhile), and asks the site agent to insert it as
// virtual media (its cached copy when it has one). A BMC without virtual media (IPMI, or a
// Redfish BMC without a virtual CD) answers UNSUPPORTED: then, once the site's cache holds
// the ISO verified, the agent gets a sanboot boot entry per PXE MAC and a one-time PXE boot,
// so the next power cycle boots the ISO from the cache. media.eject (a site step) undoes both.
import { Context } from '@temporalio/activity';
import { BOOT_ENTRY_TTL_MS, bootArchitectureFor, type BootEntry } from '../core/boot/boot-entry';
import { IronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import { resolveImageRef, verifyImageForUse } from '../services/images/catalog';
import { pinImageAtSite } from '../core/images/site-cache-report';
import { macsOf } from '../services/metal/confirm-mac';
import type { JsonObject, StepInput } from '../core/plan';
import type { ActivityDeps } from './deps';
import { runAgentCommand } from './metal-ensure-ramdisk';
import { asStep } from './step-failure';

const COMMAND_TIMEOUT_MS = 120_000;
const SITE_STEP_HEARTBEAT_TIMEOUT_MS = 10_000;
const POLL_MS = 1000;

export interface MediaInsertResult {
  imageId: string;
  sha256: string;
  via: 'virtual-media' | 'sanboot';
  macs: string[];
}

/** The failure type (IronflowError code) of a failed agent command, through its causes. */
function failureTypeOf(error: unknown): string | undefined {
  for (let cause = error as { type?: unknown; cause?: unknown } | undefined; cause; cause = cause.cause as typeof cause) {
    if (typeof cause.type === 'string') return cause.type;
  }
  return undefined;
}

export function createMetalMediaActivities(deps: ActivityDeps) {
  return {
    async 'media.insert'(input: StepInput): Promise<MediaInsertResult> {
      return asStep(async () => {
        const context = Context.current();
        const ref = input.with.image;
        if (typeof ref !== 'string') {
          throw new IronflowError('UNSUPPORTED', 'media.insert takes a catalog ISO (with.image); a URL from an earlier step (fromStep) is not offered yet', {
            path: `${input.stepKey}.with`,
          });
        }
        const row = await resolveImageRef(deps.db, input.target.tenantId, ref);
        if (!row)
          throw new IronflowError('NOT_FOUND', `image ${ref} is not in the catalog of tenant ${input.target.tenantId} (its own or a public one)`, { ref });
        if (row.kind !== 'iso' && row.format !== 'iso')
          throw new IronflowError('INVALID_INPUT', `image ${ref} is not an iso: media.insert boots ISOs; write disk images with deploy.deploy`, {
            path: `${input.stepKey}.with.image`,
            ref,
          });
        const image = await verifyImageForUse(deps.db, row.id);
        const agent = input.siteAgent;
        if (!agent) throw new IronflowError('NO_SITE_AGENT', `no site agent of site ${input.target.siteId} was picked for media.insert`, {});
        await pinImageAtSite(deps.db, { imageId: image.id, siteId: input.target.siteId, sizeBytes: image.sizeBytes, pinForMs: BOOT_ENTRY_TTL_MS });

        const attempt = context.info.attempt;
        const command = (activity: string, withInput: JsonObject) =>
          runAgentCommand(deps.temporal, deps.config.controlQueue, `${input.workflowId}/${input.stepKey}/${attempt}/${activity}`, {
            taskQueue: agent.taskQueue,
            activity,
            input: {
              workflowId: input.workflowId,
              stepKey: input.stepKey,
              use: activity,
              with: withInput,
              target: input.target,
              ...(input.quorum ? { quorum: input.quorum } : {}),
            },
            timeoutMs: COMMAND_TIMEOUT_MS,
            heartbeatTimeoutMs: SITE_STEP_HEARTBEAT_TIMEOUT_MS,
          });

        context.heartbeat({ phase: 'virtual media' });
        try {
          await command('media.insert', { url: image.source, sha256: image.sha256 });
          await appendEvent(deps.db, {
            tenantId: input.target.tenantId,
            type: 'node.media.inserted',
            subjectId: input.target.nodeId,
            data: { workflowId: input.workflowId, imageId: image.id, via: 'virtual-media' },
          });
          return { imageId: image.id, sha256: image.sha256, via: 'virtual-media', macs: [] };
        } catch (error) {
          if (failureTypeOf(error) !== 'UNSUPPORTED') throw error;
        }

        // No virtual media: sanboot the ISO from the site's cache once it holds it verified.
        const node = await deps.db.node.findUnique({ where: { id: input.target.nodeId } });
        if (!node || node.deletedAt) throw new IronflowError('NOT_FOUND', `node ${input.target.nodeId} not found`, { nodeId: input.target.nodeId });
        const macs = macsOf(node);
        if (!macs.length)
          throw new IronflowError('INVALID_STATE', `node ${node.id} has no known PXE MAC to sanboot the ISO on: inspect it out of band first`, {
            nodeId: node.id,
            reason: 'no-known-mac',
          });
        for (;;) {
          const location = await deps.db.imageLocation.findUnique({ where: { imageId_siteId: { imageId: image.id, siteId: input.target.siteId } } });
          if (location?.state === 'ready') break;
          if (location?.state === 'failed')
            throw new IronflowError('DRIVER_ERROR', `site ${input.target.siteId} could not cache ${ref} (its bytes did not match or its source failed)`, {
              ref,
              reason: 'cache-failed',
            });
          context.heartbeat({ phase: 'waiting for the site cache', state: location?.state ?? null });
          await context.sleep(POLL_MS);
        }
        const notAfter = new Date(Date.now() + BOOT_ENTRY_TTL_MS).toISOString();
        const entries: BootEntry[] = macs.map((mac) => ({
          mac,
          productUuid: node.productUuid?.toLowerCase() ?? null,
          arch: bootArchitectureFor(node.arch, node.uefi),
          nodeId: node.id,
          workflowId: input.workflowId,
          sanbootSha256: image.sha256,
          notAfter,
        }));
        context.heartbeat({ phase: 'sanboot entries' });
        await command('boot.prepareRamdisk', { entries: entries as unknown as JsonObject[] });
        await command('management.setBootDevice', { device: 'pxe', persistent: false });
        await appendEvent(deps.db, {
          tenantId: input.target.tenantId,
          type: 'node.media.inserted',
          subjectId: node.id,
          data: { workflowId: input.workflowId, imageId: image.id, via: 'sanboot', macs },
        });
        return { imageId: image.id, sha256: image.sha256, via: 'sanboot', macs };
      });
    },
  };
}
