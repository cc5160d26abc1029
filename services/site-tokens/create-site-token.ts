// siteTokens.create: a join token of role `site`, bound to one site and no pool. The bearer
// is in this answer only (its hash is stored); a replay of the same request answers the
// same token without it; the same key for another request is CONFLICT.
import { mintBearer } from '../bearer';
import type { Db } from '../db';
import { isUniqueViolation } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { newId } from '../ids';
import { JOIN_TOKEN_SCHEME } from '../../core/join-token-scheme';
import { requestHash } from '../request-hash';
import type { SiteTokenCreateInput, SiteTokenView } from '../../core/schemas/site-tokens';
import { findOwnedSite, referenceLiveSite } from '../../core/sites/site-lookup';
import { siteTokenView } from '../../core/site-tokens/site-token-view';

export async function createSiteToken(db: Db, siteId: string, input: SiteTokenCreateInput): Promise<{ token: SiteTokenView; created: boolean }> {
  const hash = requestHash({ siteId, role: 'site', ttlSeconds: input.ttlSeconds, maxUses: input.maxUses });
  const key = input.idempotencyKey;

  const replayOf = async (): Promise<{ token: SiteTokenView; created: boolean } | undefined> => {
    if (!key) return undefined;
    const existing = await db.joinToken.findUnique({ where: { tenantId_idempotencyKey: { tenantId: input.tenantId, idempotencyKey: key } } });
    if (!existing) return undefined;
    if (existing.requestHash !== hash) {
      throw new IronflowError('CONFLICT', `idempotency key ${key} was used for a different token request (site ${existing.siteId}); use a new key`, {
        path: 'idempotencyKey',
      });
    }
    return { token: siteTokenView(existing), created: false };
  };

  // The site must be the tenant's and live, replay or not.
  await findOwnedSite(db, input.tenantId, siteId);
  const replay = await replayOf();
  if (replay) return replay;

  const id = newId('joinToken');
  const { bearer, secretHash } = mintBearer(JOIN_TOKEN_SCHEME, id);
  const expiresAt = new Date(Date.now() + input.ttlSeconds * 1000);
  try {
    const row = await db.$transaction(async (tx) => {
      await referenceLiveSite(tx, input.tenantId, siteId);
      const created = await tx.joinToken.create({
        data: {
          id,
          tenantId: input.tenantId,
          siteId,
          role: 'site',
          secretHash,
          maxUses: input.maxUses,
          usesLeft: input.maxUses,
          expiresAt,
          idempotencyKey: key ?? null,
          requestHash: key ? hash : null,
        },
      });
      await appendEvent(tx, {
        tenantId: input.tenantId,
        type: 'security.site-token.created',
        subjectId: id,
        data: { siteId, maxUses: input.maxUses, expiresAt: expiresAt.toISOString() },
      });
      return created;
    });
    return { token: siteTokenView(row, bearer), created: true };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await replayOf();
    if (!winner) throw error;
    return winner;
  }
}
