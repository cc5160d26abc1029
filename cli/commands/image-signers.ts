// `ironflow image-signers add|revoke|list`: the signer allowlists. These run on the host,
// against the database of the same configuration, because the spec gives signers no API
// method: no API credential, however broad, can make a key trusted.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { IronflowConfig } from '../../services/config';
import { databaseTarget } from '../../core/database-target';
import { createDb, type Db } from '../../services/db';
import { IronflowError } from '../../core/errors';
import { addImageSigner, listImageSigners, revokeImageSigner } from '../../services/images/signers';
import { ROOT_TENANT } from '../../core/permissions';
import { imageSignerAddSchema, imageSignerRevokeSchema } from '../../core/schemas/images';
import { defineCommand } from '../command';

async function withHostDb<T>(config: IronflowConfig, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await createDb(databaseTarget(config));
  try {
    return await fn(db);
  } finally {
    await db.$disconnect();
  }
}

function readPublicKey(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new IronflowError('INVALID_INPUT', `--public-key ${file}: cannot read it (${(error as Error).message})`, { path: 'publicKey' });
  }
}

const signerColumns = [
  { header: 'tenant', value: (s: Record<string, unknown>) => s.tenantId },
  { header: 'id', value: (s: Record<string, unknown>) => s.id },
  { header: 'algorithm', value: (s: Record<string, unknown>) => s.algorithm },
  { header: 'revoked', value: (s: Record<string, unknown>) => s.revokedAt },
  { header: 'created', value: (s: Record<string, unknown>) => s.createdAt },
];

const imageSignersAddCommand = defineCommand({
  name: 'image-signers add',
  summary: "Trust a signer's key for a tenant (root: the platform), on the host: --tenant T --id ID --public-key FILE.pem",
  flags: imageSignerAddSchema.omit({ publicKeyPem: true }).extend({ publicKey: z.string().min(1) }),
  run: (ctx, input) =>
    withHostDb(ctx.config, (db) => addImageSigner(db, { tenantId: input.tenantId, id: input.id, publicKeyPem: readPublicKey(input.publicKey) })),
});

const imageSignersRevokeCommand = defineCommand({
  name: 'image-signers revoke',
  summary: 'Revoke a signer on the host; images it verified no longer deploy: ironflow image-signers revoke ID --tenant T',
  flags: imageSignerRevokeSchema,
  positionals: ['id'],
  run: (ctx, input) => withHostDb(ctx.config, (db) => revokeImageSigner(db, input)),
});

const imageSignersListCommand = defineCommand({
  name: 'image-signers list',
  summary: "A tenant's signer allowlist, on the host: --tenant T",
  flags: z.object({ tenantId: imageSignerAddSchema.shape.tenantId.default(ROOT_TENANT) }),
  run: (ctx, input) => withHostDb(ctx.config, (db) => listImageSigners(db, input.tenantId)),
  table: { columns: signerColumns },
});

export const imageSignerCommands = [imageSignersAddCommand, imageSignersRevokeCommand, imageSignersListCommand];
