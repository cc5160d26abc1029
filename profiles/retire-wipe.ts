// metal-retire's disk.wipe as the node's pool decides it (policy.retireWipe, docs/wiping.md):
// the mode, and the fallback a disk whose drive cannot do it gets ('fail': none, so such a disk
// fails the retire UNSUPPORTED naming it). Read when the plan is made, so a recover after the
// operator changed the policy runs the new one.
import type { Node } from '../generated/prisma-sqlite/client';
import type { Db } from '../services/db';
import type { JsonObject } from '../core/plan';
import { poolPolicySchema, retireWipeSchema } from '../core/schemas/pools';

export async function retireWipeWith(db: Db, node: Node): Promise<JsonObject> {
  const pool = node.poolId ? await db.pool.findUnique({ where: { id: node.poolId } }) : null;
  const { mode, fallback } = pool ? poolPolicySchema.parse(pool.policy).retireWipe : retireWipeSchema.parse({});
  return { mode, ...(fallback === 'fail' ? {} : { fallback }) };
}
