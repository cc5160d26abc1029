import { poolPolicySchema, type PoolView } from '../schemas/pools';

export interface PoolRow {
  id: string;
  tenantId: string;
  siteId: string;
  class: string;
  policy: unknown;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export function poolView(row: PoolRow): PoolView {
  return {
    id: row.id,
    tenantId: row.tenantId,
    siteId: row.siteId,
    class: row.class,
    // Stored policies were validated on write; parsing fills defaults added since.
    policy: poolPolicySchema.parse(row.policy),
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
