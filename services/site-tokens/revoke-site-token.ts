// siteTokens.revoke: site tokens only; any other join token (a node's, a discovery
// token) is NOT_FOUND here, as is another tenant's or another site's.
import type { Db } from '../db';
import { notFound } from '../../core/errors';
import { appendEvent } from '../events';
import type { SiteTokenView } from '../../core/schemas/site-tokens';
import { siteTokenView } from '../../core/site-tokens/site-token-view';

export async function revokeSiteToken(db: Db, tenantId: string, siteId: string, tokenId: string): Promise<SiteTokenView> {
  return db.$transaction(async (tx) => {
    const token = await tx.joinToken.findFirst({ where: { id: tokenId, tenantId, siteId, role: 'site' } });
    if (!token) throw notFound('site token', tokenId);
    if (token.revokedAt) return siteTokenView(token);
    const now = new Date();
    await tx.joinToken.updateMany({ where: { id: tokenId, revokedAt: null }, data: { revokedAt: now } });
    await appendEvent(tx, { tenantId, type: 'security.site-token.revoked', subjectId: tokenId, data: { siteId } });
    return siteTokenView({ ...token, revokedAt: now });
  });
}
