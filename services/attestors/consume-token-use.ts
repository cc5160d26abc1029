// Consumes one use of a join token with a guarded update: live, unrevoked, unexpired and
// with uses left, checked and decremented in one statement. Two joins racing for the
// last use: exactly one updates a row.
import type { Tx } from '../db';
import { refusal } from '../joins/refusal';
import type { JoinTokenRecord } from '../../core/attestors/attestor';

export async function consumeTokenUse(tx: Tx, token: JoinTokenRecord, now: Date): Promise<void> {
  const consumed = await tx.joinToken.updateMany({
    where: { id: token.id, usesLeft: { gt: 0 }, revokedAt: null, expiresAt: { gt: now } },
    data: { usesLeft: { decrement: 1 } },
  });
  if (consumed.count === 1) return;
  const current = await tx.joinToken.findUnique({ where: { id: token.id } });
  if (!current || current.revokedAt)
    throw refusal('UNAUTHENTICATED', 'token-revoked', `join token ${token.id} was revoked; ask for a new one`, { tokenId: token.id });
  if (current.expiresAt.getTime() <= now.getTime())
    throw refusal('UNAUTHENTICATED', 'token-expired', `join token ${token.id} expired at ${current.expiresAt.toISOString()}; ask for a new one`, {
      tokenId: token.id,
    });
  throw refusal('UNAUTHENTICATED', 'token-used-up', `join token ${token.id} has no uses left; ask for a new one (site-tokens create --max-uses)`, {
    tokenId: token.id,
  });
}
