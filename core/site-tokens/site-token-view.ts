import type { SiteTokenView } from '../schemas/site-tokens';

export interface JoinTokenRow {
  id: string;
  siteId: string;
  maxUses: number;
  usesLeft: number;
  expiresAt: Date;
  revokedAt: Date | null;
}

export function siteTokenView(row: JoinTokenRow, bearer?: string): SiteTokenView {
  return {
    id: row.id,
    siteId: row.siteId,
    role: 'site',
    maxUses: row.maxUses,
    usesLeft: row.usesLeft,
    expiresAt: row.expiresAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
    ...(bearer ? { token: bearer } : {}),
  };
}
