import type { SiteView } from '../schemas/sites';

export interface SiteRow {
  id: string;
  ownerTenantId: string;
  kind: string;
  region: string;
  iamRegion: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export function siteView(row: SiteRow): SiteView {
  return {
    id: row.id,
    ownerTenantId: row.ownerTenantId,
    kind: row.kind as SiteView['kind'],
    region: row.region,
    iamRegion: row.iamRegion,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
