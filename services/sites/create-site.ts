// sites.create: the id derives from tenant, caller and idempotency key, so a retry answers
// the same site; a different request under the same key is CONFLICT, also when two race
// (the unique id lets one insert win; the loser re-reads and compares).
import type { Db } from '../db';
import { isUniqueViolation } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { derivedId } from '../ids';
import { requestHash } from '../request-hash';
import type { SiteCreateInput, SiteView } from '../../core/schemas/sites';
import { siteView, type SiteRow } from '../../core/sites/site-view';
import { requireTenant } from '../tenants';

export async function createSite(db: Db, callerId: string, input: SiteCreateInput): Promise<{ site: SiteView; created: boolean }> {
  const id = derivedId('site', input.tenantId, callerId, input.idempotencyKey);
  const hash = requestHash({ tenantId: input.tenantId, kind: input.kind, region: input.region, iamRegion: input.iamRegion });

  const replay = (existing: SiteRow & { requestHash: string; deletedAt: Date | null }) => {
    if (existing.requestHash !== hash) {
      throw new IronflowError('CONFLICT', `idempotency key ${input.idempotencyKey} was used for a different site request; use a new key`, {
        path: 'idempotencyKey',
        siteId: id,
      });
    }
    if (existing.deletedAt) throw new IronflowError('INVALID_STATE', `site ${id} (key ${input.idempotencyKey}) was deleted; use a new key`, { siteId: id });
    return { site: siteView(existing), created: false };
  };

  const existing = await db.site.findUnique({ where: { id } });
  if (existing) return replay(existing);
  await requireTenant(db, input.tenantId);
  try {
    const row = await db.$transaction(async (tx) => {
      const created = await tx.site.create({
        data: {
          id,
          ownerTenantId: input.tenantId,
          kind: input.kind,
          region: input.region,
          iamRegion: input.iamRegion ?? null,
          callerId,
          idempotencyKey: input.idempotencyKey,
          requestHash: hash,
        },
      });
      await appendEvent(tx, {
        tenantId: input.tenantId,
        type: 'site.created',
        subjectId: id,
        data: { kind: input.kind, region: input.region, iamRegion: input.iamRegion ?? null },
      });
      return created;
    });
    return { site: siteView(row), created: true };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await db.site.findUnique({ where: { id } });
    if (!winner) throw error;
    return replay(winner);
  }
}
