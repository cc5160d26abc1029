// metal-retire's disk.wipe as the node's pool decides it (policy.retireWipe, docs/wiping.md):
// the mode, and the fallback a disk whose drive cannot do it gets ('fail': none, so such a disk
// fails the retire UNSUPPORTED naming it). Read when the plan is made, so a recover after the
// operator changed the policy runs the new one.
import type { Node } from '../generated/prisma-sqlite/client';
import type { Db } from '../services/db';
import type { JsonObject } from '../core/plan';
import { retireWipeSchema } from '../core/schemas/pools';
import { poolPolicyOf } from '../services/pools/pool-policy';

export async function retireWipeWith(db: Db, node: Node): Promise<JsonObject> {
  const { mode, fallback } = (await poolPolicyOf(db, node.poolId))?.retireWipe ?? retireWipeSchema.parse({});
  return { mode, ...(fallback === 'fail' ? {} : { fallback }) };
}
