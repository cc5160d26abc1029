// A pool's policy, read raw and checked. A machine's state plans, lifecycle moves and ramdisk
// boots read it about 37 times over a fleet's enroll, deploy and release, and Prisma compiling
// each model query cost more than the read (bench/README.md, "2026-12-03").
import { poolPolicySchema, type PoolPolicy } from '../../core/schemas/pools';
import { Prisma, type DbOrTx } from '../db';
import { queryRows } from '../raw-statements';

/** The policy of pool `poolId`; null without a pool, or when it is gone. */
export async function poolPolicyOf(db: DbOrTx, poolId: string | null): Promise<PoolPolicy | null> {
  if (!poolId) return null;
  const [row] = await queryRows<{ policy: unknown }>(db, Prisma.sql`SELECT "policy" FROM "Pool" WHERE "id" = ${poolId}`);
  return row ? poolPolicySchema.parse(row.policy) : null;
}
