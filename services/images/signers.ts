// The signer allowlists, per tenant (the root tenant's are the platform's). Host functions
// only: the spec gives them no API method, so an API credential can never add a signer.
import type { ImageSigner } from '../../generated/prisma-sqlite/client';
import type { Db } from '../db';
import { IronflowError, parseWith } from '../../core/errors';
import { appendEvent } from '../events';
import { imageSignerAddSchema, imageSignerRevokeSchema, type ImageSignerView } from '../../core/schemas/images';
import { parseSignerPublicKey } from './verify';
import { requireTenant } from '../tenants';

function signerView(row: ImageSigner): ImageSignerView {
  return {
    tenantId: row.tenantId,
    id: row.id,
    algorithm: parseSignerPublicKey(row.publicKeyPem).algorithm,
    publicKeyPem: row.publicKeyPem,
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * Adds a signer to a tenant's allowlist. Adding the same key again is a no-op; another key
 * under the id, or reusing a revoked id, is CONFLICT (images it verified must stay dead).
 */
export async function addImageSigner(db: Db, input: { tenantId: string; id: string; publicKeyPem: string }): Promise<ImageSignerView> {
  const parsed = parseWith(imageSignerAddSchema, input);
  const key = parseSignerPublicKey(parsed.publicKeyPem);
  return db.$transaction(async (tx) => {
    await requireTenant(tx, parsed.tenantId);
    const existing = await tx.imageSigner.findUnique({ where: { tenantId_id: { tenantId: parsed.tenantId, id: parsed.id } } });
    if (existing) {
      if (existing.revokedAt) {
        throw new IronflowError('CONFLICT', `signer ${parsed.id} of tenant ${parsed.tenantId} was revoked; a revoked id is never reused, choose a new one`, {
          path: 'id',
        });
      }
      if (existing.publicKeyPem !== key.spkiPem) {
        throw new IronflowError('CONFLICT', `signer ${parsed.id} of tenant ${parsed.tenantId} already has another key; choose a new id for a new key`, {
          path: 'id',
        });
      }
      return signerView(existing);
    }
    const row = await tx.imageSigner.create({ data: { tenantId: parsed.tenantId, id: parsed.id, publicKeyPem: key.spkiPem } });
    await appendEvent(tx, { tenantId: parsed.tenantId, type: 'security.image-signer.added', subjectId: parsed.id, data: { algorithm: key.algorithm } });
    return signerView(row);
  });
}

/** Revokes a signer: images it verified keep their flag but no longer pass verifyImageForUse. */
export async function revokeImageSigner(db: Db, input: { tenantId: string; id: string }): Promise<ImageSignerView> {
  const parsed = parseWith(imageSignerRevokeSchema, input);
  return db.$transaction(async (tx) => {
    const existing = await tx.imageSigner.findUnique({ where: { tenantId_id: { tenantId: parsed.tenantId, id: parsed.id } } });
    if (!existing) throw new IronflowError('NOT_FOUND', `signer ${parsed.id} of tenant ${parsed.tenantId} not found`, { path: 'id' });
    if (existing.revokedAt) return signerView(existing);
    const row = await tx.imageSigner.update({
      where: { tenantId_id: { tenantId: parsed.tenantId, id: parsed.id } },
      data: { revokedAt: new Date() },
    });
    await appendEvent(tx, { tenantId: parsed.tenantId, type: 'security.image-signer.revoked', subjectId: parsed.id });
    return signerView(row);
  });
}

export async function listImageSigners(db: Db, tenantId: string): Promise<ImageSignerView[]> {
  const rows = await db.imageSigner.findMany({ where: { tenantId }, orderBy: { id: 'asc' } });
  return rows.map(signerView);
}
