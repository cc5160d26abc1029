// The image catalog: where an artifact lives, what it is, and whether a trusted signer
// vouched for it. It never stores the image. Unsigned images stay private to their tenant
// (a table CHECK enforces it too), and every deploy re-verifies the stored signature.
import type { Image } from '../../generated/prisma-sqlite/client';
import { isUniqueViolation, type Db, type DbOrTx } from '../db';
import { IronflowError, notFound, parseWith } from '../../core/errors';
import { appendEvent } from '../events';
import { newId } from '../ids';
import { ROOT_TENANT } from '../../core/permissions';
import {
  imageListQuerySchema,
  imageRegisterSchema,
  type ImageListQuery,
  type ImagePage,
  type ImageRegisterInput,
  type ImageView,
} from '../../core/schemas/images';
import { announcePrewarmChange } from './prewarm-sites';
import { allowlistVerifier, type ImageVerdict, type ImageVerifier } from './verify';

export type ImageRecord = Image;

export interface CatalogOptions {
  /** Defaults to the offline allowlist verifier over ImageSigner. */
  verifier?: ImageVerifier;
}

export function imageView(row: Image): ImageView {
  return {
    id: row.id,
    tenantId: row.tenantId,
    ref: row.ref,
    kind: row.kind,
    format: row.format,
    compression: row.compression,
    sha256: row.sha256,
    sizeBytes: Number(row.sizeBytes),
    source: row.source,
    signerId: row.signerId,
    signerTenantId: row.signerTenantId,
    signature: row.signature,
    verified: row.verified,
    visibility: row.visibility === 'public' ? 'public' : 'private',
    createdAt: row.createdAt.toISOString(),
  };
}

/** The allowlists that may vouch for a tenant's image: its own, then the platform's. */
function allowlistTenantsFor(tenantId: string): string[] {
  return tenantId === ROOT_TENANT ? [ROOT_TENANT] : [tenantId, ROOT_TENANT];
}

function sameRegistration(row: Image, input: ImageRegisterInput): boolean {
  return (
    row.kind === input.kind &&
    row.format === input.format &&
    row.compression === input.compression &&
    row.sha256 === input.sha256 &&
    Number(row.sizeBytes) === input.sizeBytes &&
    row.source === input.source &&
    row.signerId === (input.signerId ?? null) &&
    row.signature === (input.signature ?? null)
  );
}

/**
 * Registers an image by digest. A signature must verify against the named signer of the
 * tenant or the platform, else INVALID_INPUT. Registering the same ref again with the same
 * fields returns the existing image; with other fields it is CONFLICT (refs are immutable).
 */
export async function registerImage(db: Db, input: ImageRegisterInput, options: CatalogOptions = {}): Promise<{ image: ImageView; created: boolean }> {
  const parsed = parseWith(imageRegisterSchema, input);
  const verifier = options.verifier ?? allowlistVerifier(db);
  let signerTenantId: string | null = null;
  if (parsed.signerId !== undefined && parsed.signature !== undefined) {
    const verdict = await verifier.verify({
      image: parsed,
      signerId: parsed.signerId,
      signature: parsed.signature,
      allowlistTenants: allowlistTenantsFor(parsed.tenantId),
    });
    if (!verdict.ok) {
      throw new IronflowError('INVALID_INPUT', `${verdict.reason}; sign the output of imageSigningInput (ironflow images sign) with a key of the allowlist`, {
        path: 'signature',
      });
    }
    signerTenantId = verdict.signerTenantId;
  }
  const existingOrConflict = async (): Promise<{ image: ImageView; created: boolean } | undefined> => {
    const existing = await db.image.findUnique({ where: { tenantId_ref: { tenantId: parsed.tenantId, ref: parsed.ref } } });
    if (!existing) return undefined;
    if (!sameRegistration(existing, parsed)) {
      throw new IronflowError('CONFLICT', `image ${parsed.ref} is already registered with other fields; refs are immutable, register a new version`, {
        path: 'ref',
        imageId: existing.id,
      });
    }
    return { image: imageView(existing), created: false };
  };
  const replay = await existingOrConflict();
  if (replay) return replay;
  try {
    return await db.$transaction(async (tx) => {
      if (!(await tx.tenant.findUnique({ where: { id: parsed.tenantId } }))) {
        throw new IronflowError('NOT_FOUND', `tenant ${parsed.tenantId} not found`, { path: 'tenantId' });
      }
      const row = await tx.image.create({
        data: {
          id: newId('image'),
          tenantId: parsed.tenantId,
          ref: parsed.ref,
          kind: parsed.kind,
          format: parsed.format,
          compression: parsed.compression,
          sha256: parsed.sha256,
          sizeBytes: BigInt(parsed.sizeBytes),
          source: parsed.source,
          signerId: parsed.signerId ?? null,
          signerTenantId,
          signature: parsed.signature ?? null,
          verified: signerTenantId !== null,
          visibility: 'private',
        },
      });
      await appendEvent(tx, {
        tenantId: row.tenantId,
        type: 'image.registered',
        subjectId: row.id,
        data: { ref: row.ref, kind: row.kind, sha256: row.sha256, verified: row.verified, signerId: row.signerId },
      });
      await announcePrewarmChange(tx, row.ref, row.id);
      return { image: imageView(row), created: true };
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      const raced = await existingOrConflict();
      if (raced) return raced;
    }
    throw error;
  }
}

/** A tenant's own image, or a public one; anything else is NOT_FOUND. */
export async function getImage(db: DbOrTx, tenantId: string, imageId: string): Promise<ImageView> {
  const row = await db.image.findFirst({ where: { id: imageId, OR: [{ tenantId }, { visibility: 'public' }] } });
  if (!row) throw notFound('image', imageId);
  return imageView(row);
}

/** The tenant's own images and public ones, oldest first, a page at a time. */
export async function listImages(db: DbOrTx, query: ImageListQuery): Promise<ImagePage> {
  const parsed = parseWith(imageListQuerySchema, query);
  const rows = await db.image.findMany({
    where: {
      OR: [{ tenantId: parsed.tenantId }, { visibility: 'public' }],
      ...(parsed.kind ? { kind: parsed.kind } : {}),
      ...(parsed.cursor ? { id: { gt: parsed.cursor } } : {}),
    },
    orderBy: { id: 'asc' },
    take: parsed.limit + 1,
  });
  const page = rows.slice(0, parsed.limit);
  const last = page[page.length - 1];
  return { images: page.map(imageView), nextCursor: rows.length > parsed.limit && last ? last.id : null };
}

/** A profile's image.ref: the tenant's own image first, then a public one (the platform's first). */
export async function resolveImageRef(db: DbOrTx, tenantId: string, ref: string): Promise<ImageRecord | null> {
  const own = await db.image.findUnique({ where: { tenantId_ref: { tenantId, ref } } });
  if (own) return own;
  const shared = await db.image.findMany({ where: { ref, visibility: 'public' }, orderBy: { id: 'asc' } });
  return shared.find((row) => row.tenantId === ROOT_TENANT) ?? shared[0] ?? null;
}

/**
 * Re-verifies a stored row: its signature against the allowlist that verified it at
 * registration, which must be the image's own tenant's or the platform's. A row whose flag
 * and signature disagree was changed by hand.
 */
async function storedSignatureVerdict(row: Image, verifier: ImageVerifier): Promise<ImageVerdict | 'unsigned'> {
  const signed = row.signerId !== null && row.signature !== null && row.signerTenantId !== null;
  if (!signed)
    return row.verified || row.signerId !== null || row.signature !== null ? { ok: false, reason: 'the row claims a signature it does not hold' } : 'unsigned';
  if (!row.verified) return { ok: false, reason: 'the row holds a signature but is not marked verified' };
  if (row.signerTenantId !== row.tenantId && row.signerTenantId !== ROOT_TENANT) {
    return { ok: false, reason: `signer tenant ${row.signerTenantId} may not vouch for an image of tenant ${row.tenantId}` };
  }
  return verifier.verify({
    image: row,
    signerId: row.signerId as string,
    signature: row.signature as string,
    allowlistTenants: [row.signerTenantId as string],
  });
}

function refusal(row: Image, reason: 'unsigned' | 'signature', why: string): IronflowError {
  return new IronflowError('INVALID_STATE', `image ${row.ref} (${row.id}) ${why}`, { reason, imageId: row.id });
}

/** Makes a tenant's verified image public to every tenant; an unsigned one is INVALID_STATE. */
export async function promoteImage(db: Db, tenantId: string, imageId: string, options: CatalogOptions = {}): Promise<ImageView> {
  const verifier = options.verifier ?? allowlistVerifier(db);
  const row = await db.image.findFirst({ where: { id: imageId, tenantId } });
  if (!row) throw notFound('image', imageId);
  const verdict = await storedSignatureVerdict(row, verifier);
  if (verdict === 'unsigned') throw refusal(row, 'unsigned', 'is unsigned and stays private; register it again with --signer and --signature');
  if (!verdict.ok) throw refusal(row, 'signature', `no longer verifies: ${verdict.reason}`);
  if (row.visibility === 'public') return imageView(row);
  return db.$transaction(async (tx) => {
    const updated = await tx.image.update({ where: { id: row.id }, data: { visibility: 'public' } });
    await appendEvent(tx, { tenantId, type: 'image.promoted', subjectId: row.id, data: { ref: row.ref } });
    await announcePrewarmChange(tx, row.ref, row.id);
    return imageView(updated);
  });
}

export interface UseOptions extends CatalogOptions {
  /** Development only: a tenant-private unsigned OS image may deploy. Never a ramdisk, never a failing signature. */
  allowUnsigned?: boolean;
}

/**
 * The deploy-time check. An unsigned image, a revoked signer or a tampered row is
 * INVALID_STATE with details.reason `unsigned` or `signature`.
 */
export async function verifyImageForUse(db: DbOrTx, imageId: string, options: UseOptions = {}): Promise<ImageRecord> {
  const verifier = options.verifier ?? allowlistVerifier(db);
  const row = await db.image.findUnique({ where: { id: imageId } });
  if (!row) throw notFound('image', imageId);
  const verdict = await storedSignatureVerdict(row, verifier);
  if (verdict === 'unsigned') {
    if (options.allowUnsigned && row.kind === 'os' && row.visibility === 'private') return row;
    const why = options.allowUnsigned
      ? `is unsigned, and allowUnsigned covers only a tenant-private OS image (this is a ${row.visibility} ${row.kind} image)`
      : 'is unsigned; register a signed version (ironflow images sign, then images register --signer --signature)';
    throw refusal(row, 'unsigned', why);
  }
  if (!verdict.ok) throw refusal(row, 'signature', `does not verify: ${verdict.reason}`);
  return row;
}
