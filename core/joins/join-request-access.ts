// Another tenant's join request is NOT_FOUND, as every object of another tenant.
import { IronflowError } from '../errors';

export function authorizeTenantObject<T extends { tenantId: string }>(row: T | null, tenantId: string, id: string): asserts row is T {
  if (!row || row.tenantId !== tenantId) throw new IronflowError('NOT_FOUND', `join request ${id} not found`, { id });
}
