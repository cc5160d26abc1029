// sites.update: region and iamRegion (or clearIamRegion). A guarded update on the version
// read turns a concurrent or stale write into CONFLICT instead of a lost update.
import type { Db } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import type { SiteUpdateInput, SiteView } from '../../core/schemas/sites';
import { findOwnedSite } from '../../core/sites/site-lookup';
import { siteView } from '../../core/sites/site-view';

export async function updateSite(db: Db, siteId: string, input: SiteUpdateInput): Promise<SiteView> {
  return db.$transaction(async (tx) => {
    const site = await findOwnedSite(tx, input.tenantId, siteId);
    if (input.version !== undefined && input.version !== site.version) {
      throw new IronflowError('CONFLICT', `site ${siteId} is at version ${site.version}, not ${input.version}; read it again and retry`, {
        path: 'version',
        version: site.version,
      });
    }
    const changes = {
      ...(input.region !== undefined ? { region: input.region } : {}),
      ...(input.iamRegion !== undefined ? { iamRegion: input.iamRegion } : {}),
      ...(input.clearIamRegion ? { iamRegion: null } : {}),
    };
    const updated = await tx.site.updateMany({
      where: { id: siteId, version: site.version, deletedAt: null },
      data: { ...changes, version: site.version + 1 },
    });
    if (updated.count !== 1) throw new IronflowError('CONFLICT', `site ${siteId} changed while updating; read it again and retry`, { path: 'version' });
    await appendEvent(tx, { tenantId: input.tenantId, type: 'site.updated', subjectId: siteId, data: { ...changes, version: site.version + 1 } });
    const row = await tx.site.findUniqueOrThrow({ where: { id: siteId } });
    return siteView(row);
  });
}
