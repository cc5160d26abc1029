// The site attestor: a site agent joins with a live, unexpired, unrevoked site token of a
// live site, with a use left; it becomes a new `site` node of that site, in no pool.
import { newId } from '../ids';
import { refusal } from '../joins/refusal';
import { referenceLiveSite } from '../../core/sites/site-lookup';
import type { Attestor } from '../../core/attestors/attestor';
import { consumeTokenUse } from './consume-token-use';

export const siteAttestor: Attestor = {
  role: 'site',
  async admit({ tx, token, now }) {
    if (token.poolId !== null)
      throw refusal('UNAUTHENTICATED', 'token-not-a-site-token', `join token ${token.id} is bound to a pool, not a site`, { tokenId: token.id });
    // The token first: deleting a site revokes its tokens, so that is the usual answer.
    await consumeTokenUse(tx, token, now);
    await referenceLiveSite(tx, token.tenantId, token.siteId).catch((error: unknown) => {
      throw refusal('INVALID_STATE', 'site-deleted', `site ${token.siteId} of join token ${token.id} is deleted or gone`, {
        tokenId: token.id,
        cause: (error as Error).message,
      });
    });
    return { tenantId: token.tenantId, siteId: token.siteId, poolId: null, nodeId: newId('node'), newNode: true, role: 'site' };
  },
};
