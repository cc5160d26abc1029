// `ironflow images register|list|get|promote` (the API) and `images sign` (local: signs the
// signing input with a key file, so publishers never hand a private key to anything).
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { IronflowError, parseWith } from '../../core/errors';
import { imageSigningInput } from '../../core/images/signing-input';
import { ROOT_TENANT } from '../../core/permissions';
import {
  imageFormatSchema,
  imageGetQuerySchema,
  imageIdSchema,
  imageListQuerySchema,
  imageRegisterObject,
  imageRegisterSchema,
  imageSigningFieldsSchema,
  imageSizeBytesSchema,
  type ImagePage,
} from '../../core/schemas/images';
import { defineCommand, type Column } from '../command';

const tenantFlag = imageRegisterObject.shape.tenantId.default(ROOT_TENANT);

const imageColumns: Column[] = [
  { header: 'id', value: (i) => i.id },
  { header: 'ref', value: (i) => i.ref },
  { header: 'kind', value: (i) => i.kind },
  { header: 'format', value: (i) => `${String(i.format)}/${String(i.compression)}` },
  { header: 'verified', value: (i) => i.verified },
  { header: 'visibility', value: (i) => i.visibility },
  { header: 'tenant', value: (i) => i.tenantId },
];

const imagesRegisterCommand = defineCommand({
  name: 'images register',
  summary:
    'Register an image by digest: --ref N@V --kind os --source URL --disk-format raw --compression zstd --sha256 HEX --size BYTES [--signer ID --signature B64]',
  // --format is the CLI's output flag, so the image format is --disk-format, and sizeBytes is --size.
  flags: imageRegisterObject
    .omit({ format: true, sizeBytes: true })
    .extend({ tenantId: tenantFlag, kind: imageRegisterObject.shape.kind.default('os'), diskFormat: imageFormatSchema, size: imageSizeBytesSchema }),
  async run(ctx, input) {
    const { diskFormat, size, ...rest } = input;
    const body = parseWith(imageRegisterSchema, { ...rest, format: diskFormat, sizeBytes: size });
    return ctx.api.call('POST', '/v1/images', body);
  },
});

const imagesListCommand = defineCommand({
  name: 'images list',
  summary: "The tenant's images and public ones: [--kind os] [--limit N] [--cursor IMG]",
  flags: imageListQuerySchema.extend({ tenantId: tenantFlag }),
  async run(ctx, input) {
    const query = new URLSearchParams({ tenantId: input.tenantId, limit: String(input.limit) });
    if (input.kind) query.set('kind', input.kind);
    if (input.cursor) query.set('cursor', input.cursor);
    const page = await ctx.api.call<ImagePage>('GET', `/v1/images?${query}`);
    if (page.nextCursor) ctx.note(`more: --cursor ${page.nextCursor}`);
    return page.images;
  },
  table: { columns: imageColumns },
});

const imagesGetCommand = defineCommand({
  name: 'images get',
  summary: 'One image: ironflow images get IMG',
  flags: imageGetQuerySchema.extend({ tenantId: tenantFlag, imageId: imageIdSchema }),
  positionals: ['imageId'],
  run: (ctx, input) => ctx.api.call('GET', `/v1/images/${input.imageId}?${new URLSearchParams({ tenantId: input.tenantId })}`),
});

const imagesPromoteCommand = defineCommand({
  name: 'images promote',
  summary: 'Make a verified image public to every tenant: ironflow images promote IMG',
  flags: z.object({ tenantId: tenantFlag, imageId: imageIdSchema }),
  positionals: ['imageId'],
  run: (ctx, input) => ctx.api.call('POST', `/v1/images/${input.imageId}/promote`, { tenantId: input.tenantId }),
});

function readSigningKey(file: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(file));
  } catch (error) {
    throw new IronflowError('INVALID_INPUT', `--key ${file}: not a readable PEM private key (${(error as Error).message})`, { path: 'key' });
  }
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType === 'ed25519' || (key.asymmetricKeyType === 'ec' && curve === 'prime256v1')) return key;
  throw new IronflowError('INVALID_INPUT', `--key ${file}: image signers use Ed25519 or ECDSA P-256 keys, not ${key.asymmetricKeyType}`, { path: 'key' });
}

/** Ed25519, or ECDSA P-256 over SHA-256 (DER, as openssl writes it). */
function signImage(key: KeyObject, fields: z.infer<typeof imageSigningFieldsSchema>): string {
  const input = imageSigningInput(fields);
  return (key.asymmetricKeyType === 'ed25519' ? sign(null, input, key) : sign('sha256', input, key)).toString('base64');
}

const imagesSignCommand = defineCommand({
  name: 'images sign',
  summary: 'Sign an image locally and print the signature: --key FILE.pem --kind os --ref N@V --disk-format raw --compression zstd --sha256 HEX',
  flags: imageSigningFieldsSchema
    .omit({ format: true })
    .extend({ key: z.string().min(1), kind: imageSigningFieldsSchema.shape.kind.default('os'), diskFormat: imageFormatSchema }),
  async run(_ctx, input) {
    const { key, diskFormat, ...rest } = input;
    return signImage(readSigningKey(key), { ...rest, format: diskFormat });
  },
});

export const imageCommands = [imagesRegisterCommand, imagesListCommand, imagesGetCommand, imagesPromoteCommand, imagesSignCommand];
