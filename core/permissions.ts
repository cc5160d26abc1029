// Permissions a credential can carry. `*` (the root credential) carries all of them.
export const permissions = [
  'compute:tenants:manage',
  'compute:sites:manage',
  'compute:sites:read',
  'compute:nodes:provision',
  'compute:nodes:power',
  'compute:nodes:read',
  'compute:images:publish',
  'compute:images:read',
  'compute:profiles:manage',
  'compute:profiles:read',
  'compute:events:read',
  'compute:credentials:manage',
  'compute:credentials:read',
] as const;
export type Permission = (typeof permissions)[number];
export const ALL_PERMISSIONS = '*';

export const ROOT_TENANT = 'root';
/** Shipped profiles are listed under this tenant; no credential belongs to it. */
export const BUILTIN_TENANT = 'builtin';

export function grants(held: readonly string[], wanted: Permission): boolean {
  return held.includes(ALL_PERMISSIONS) || held.includes(wanted);
}
