// Stored profiles (the Profile table, per tenant and version, private or public) and the
// shipped ones (tenant `builtin`). A lookup prefers the tenant's own profile, then a
// public stored one, then a shipped one. A version is immutable once a workflow used it.
// A shipped id is reserved and only root's stored profiles are public (issue 13: a tenant's
// public `metal-power-on` ran in every tenant's power verb), so a lookup of a shipped id
// reads the shipped profile alone, and rows stored before these rules are never served to
// other tenants or in a shipped profile's place.
import { isUniqueViolation, Prisma, type Db, type DbOrTx } from '../services/db';
import { queryRows } from '../services/raw-statements';
import { IronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import { BUILTIN_TENANT, ROOT_TENANT } from '../core/permissions';
import type { ProfileView } from '../core/schemas/profiles';
import { stepRegistry } from '../core/steps/builtin';
import { checkProfile } from './check';
import { profileError } from './defineProfile';
import { shippedProfiles } from './shipped';

interface ProfileRow {
  tenantId: string;
  profileId: string;
  version: number;
  document: unknown;
  visibility: string;
  lockedAt: Date | null;
  rowVersion: number;
}

const rowView = (row: ProfileRow): ProfileView => ({
  tenantId: row.tenantId,
  id: row.profileId,
  version: row.version,
  visibility: row.visibility === 'public' ? 'public' : 'private',
  locked: row.lockedAt !== null,
  rowVersion: row.rowVersion,
  document: row.document as Record<string, unknown>,
});

function shippedViews(id?: string): ProfileView[] {
  return shippedProfiles()
    .filter((p) => id === undefined || p.id === id)
    .map((p) => ({
      tenantId: BUILTIN_TENANT,
      id: p.id,
      version: p.version,
      visibility: 'builtin' as const,
      locked: true,
      rowVersion: 1,
      document: p as unknown as Record<string, unknown>,
    }));
}

const latest = <T extends { version: number }>(items: T[]): T | undefined =>
  items.reduce<T | undefined>((best, p) => (!best || p.version > best.version ? p : best), undefined);

const isShippedId = (id: string): boolean => shippedProfiles().some((p) => p.id === id);

/** The profile `id` as `tenantId` sees it: its own, else root's public one, else a shipped one (a shipped id: only that). */
export async function resolveProfile(db: DbOrTx, tenantId: string, id: string, version?: number): Promise<ProfileView> {
  if (!isShippedId(id)) {
    // The tenant's own latest version, else root's public one: one raw read, as every provision start makes it.
    const [row] = await queryRows<ProfileRow>(
      db,
      Prisma.sql`SELECT * FROM "Profile"
        WHERE "profileId" = ${id} AND ("tenantId" = ${tenantId} OR ("tenantId" = ${ROOT_TENANT} AND "visibility" = 'public'))
        ${version === undefined ? Prisma.empty : Prisma.sql`AND "version" = ${version}`}
        ORDER BY CASE WHEN "tenantId" = ${tenantId} THEN 0 ELSE 1 END, "version" DESC LIMIT 1`,
    );
    if (row) return rowView(row);
  }
  const shipped = latest(shippedViews(id).filter((p) => version === undefined || p.version === version));
  if (shipped) return shipped;
  throw new IronflowError(
    'NOT_FOUND',
    `profile ${id}${version ? ` version ${version}` : ''} not found for tenant ${tenantId} (its own, public or shipped); \`ironflow profiles list\` shows what there is`,
    { id, ...(version ? { version } : {}) },
  );
}

/** Every profile version the tenant can use: its own, root's public ones, shipped ones. */
export async function listProfiles(db: DbOrTx, tenantId: string, id?: string): Promise<ProfileView[]> {
  const shippedIds = shippedProfiles().map((p) => p.id);
  const rows = await db.profile.findMany({
    where: { OR: [{ tenantId }, { tenantId: ROOT_TENANT, visibility: 'public' }], profileId: id ? { equals: id, notIn: shippedIds } : { notIn: shippedIds } },
    orderBy: [{ profileId: 'asc' }, { version: 'asc' }, { tenantId: 'asc' }],
  });
  return [...rows.map(rowView), ...shippedViews(id)];
}

/** Only the platform (root) tenant publishes profiles to every tenant. */
function checkMayPublish(tenantId: string, path: 'public' | 'visibility'): void {
  if (tenantId !== ROOT_TENANT) {
    throw new IronflowError('PERMISSION_DENIED', `only the ${ROOT_TENANT} tenant makes a profile public; tenant ${tenantId}'s profiles stay private to it`, {
      path,
    });
  }
}

/** Checks a document for the API: every problem becomes INVALID_INPUT under `document`. */
function checkForApi(document: unknown) {
  const { profile, problems } = checkProfile(document, stepRegistry);
  if (!profile) throw profileError(problems, 'INVALID_INPUT', 'document');
  return profile;
}

export async function createProfile(db: Db, input: { tenantId: string; document: unknown; public: boolean }): Promise<ProfileView> {
  if (input.tenantId === BUILTIN_TENANT) throw new IronflowError('INVALID_INPUT', `${BUILTIN_TENANT} holds shipped profiles only`, { path: 'tenantId' });
  if (input.public) checkMayPublish(input.tenantId, 'public');
  const profile = checkForApi(input.document);
  if (isShippedId(profile.id)) {
    throw new IronflowError('CONFLICT', `profile id ${profile.id} belongs to a shipped profile and cannot be stored; pick another id`, { path: 'document.id' });
  }
  try {
    const row = await db.$transaction(async (tx) => {
      const created = await tx.profile.create({
        data: {
          tenantId: input.tenantId,
          profileId: profile.id,
          version: profile.version,
          document: profile as object,
          visibility: input.public ? 'public' : 'private',
        },
      });
      await appendEvent(tx, {
        tenantId: input.tenantId,
        type: 'profile.created',
        subjectId: profile.id,
        data: { version: profile.version, visibility: created.visibility },
      });
      return created;
    });
    return rowView(row);
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new IronflowError('CONFLICT', `profile ${profile.id} version ${profile.version} already exists; bump "version" to store a new one`, {
        path: 'document.version',
      });
    }
    throw err;
  }
}

export interface ProfileUpdate {
  tenantId: string;
  id: string;
  version?: number;
  document?: unknown;
  visibility?: 'private' | 'public';
  ifVersion?: number;
}

export async function updateProfile(db: Db, input: ProfileUpdate): Promise<ProfileView> {
  if (input.visibility === 'public') checkMayPublish(input.tenantId, 'visibility');
  return db.$transaction(async (tx) => {
    const row = await tx.profile.findFirst({
      where: { tenantId: input.tenantId, profileId: input.id, ...(input.version ? { version: input.version } : {}) },
      orderBy: { version: 'desc' },
    });
    if (!row)
      throw new IronflowError('NOT_FOUND', `profile ${input.id} is not stored by tenant ${input.tenantId} (shipped profiles are read-only)`, { id: input.id });
    if (input.ifVersion !== undefined && input.ifVersion !== row.rowVersion) {
      throw new IronflowError(
        'CONFLICT',
        `profile ${input.id} version ${row.version} changed (row version ${row.rowVersion}, you had ${input.ifVersion}); read it again`,
        { rowVersion: row.rowVersion },
      );
    }
    const data: { document?: object; visibility?: string } = {};
    if (input.document !== undefined) {
      if (row.lockedAt) {
        throw new IronflowError(
          'INVALID_STATE',
          `profile ${input.id} version ${row.version} is locked: a workflow used it on ${row.lockedAt.toISOString()}; store version ${row.version + 1} instead`,
          { path: 'document' },
        );
      }
      const profile = checkForApi(input.document);
      if (profile.id !== row.profileId || profile.version !== row.version) {
        throw new IronflowError('INVALID_INPUT', `the replacement must keep id ${row.profileId} and version ${row.version}`, {
          path: profile.id !== row.profileId ? 'document.id' : 'document.version',
        });
      }
      data.document = profile as object;
    }
    if (input.visibility !== undefined) data.visibility = input.visibility;
    const updated = await tx.profile.updateMany({
      where: {
        tenantId: row.tenantId,
        profileId: row.profileId,
        version: row.version,
        rowVersion: row.rowVersion,
        ...(data.document ? { lockedAt: null } : {}),
      },
      data: { ...data, rowVersion: row.rowVersion + 1 },
    });
    if (updated.count !== 1) throw new IronflowError('CONFLICT', `profile ${input.id} changed meanwhile; read it again`, {});
    await appendEvent(tx, {
      tenantId: input.tenantId,
      type: 'profile.updated',
      subjectId: row.profileId,
      data: { version: row.version, ...(data.visibility ? { visibility: data.visibility } : {}), document: data.document !== undefined },
    });
    const fresh = await tx.profile.findUniqueOrThrow({
      where: { tenantId_profileId_version: { tenantId: row.tenantId, profileId: row.profileId, version: row.version } },
    });
    return rowView(fresh);
  });
}

/** Makes a stored version immutable; the first workflow that uses it calls this. */
export async function lockProfileVersion(db: DbOrTx, view: ProfileView): Promise<void> {
  if (view.visibility === 'builtin' || view.locked) return;
  await db.profile.updateMany({
    where: { tenantId: view.tenantId, profileId: view.id, version: view.version, lockedAt: null },
    data: { lockedAt: new Date() },
  });
}
