// Inputs and views of the image catalog and its signers, shared by the API, the CLI and OpenAPI.
import { z } from 'zod';
import { idOf, tenantIdSchema } from './common';

export const imageKinds = ['os', 'ramdisk', 'iso', 'firmware'] as const;
export const imageFormats = ['raw', 'qcow2', 'iso'] as const;
export const imageCompressions = ['none', 'zstd', 'gzip'] as const;

export const imageKindSchema = z.enum(imageKinds);
export const imageFormatSchema = z.enum(imageFormats);
export const imageCompressionSchema = z.enum(imageCompressions);

/** `name@version`, e.g. `ubuntu-24.04-server@2026.09`. */
export const imageRefSchema = z
  .string()
  .max(192)
  .regex(/^[a-z0-9][a-z0-9._-]{0,127}@[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'an image ref is name@version (letters, digits, . _ -)');

export const sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 digest is 64 lower-case hex digits');

/** Where the artifact lives: https:// or oci:// only, one printable token (no quotes, backslashes or spaces). */
export const imageSourceSchema = z
  .string()
  .max(2048)
  .regex(/^(https|oci):\/\/[^\s"'\\<>`]+$/, 'the source is an https:// or oci:// URL without spaces or quotes')
  .refine((value) => {
    if (!value.startsWith('https://')) return true;
    try {
      return new URL(value).hostname !== '';
    } catch {
      return false;
    }
  }, 'the https:// source is not a valid URL');

export const imageSignerIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a signer id is letters, digits, . _ -');

export const imageSignatureSchema = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'the signature is standard base64');

export const imageSizeBytesSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const imageFields = {
  tenantId: tenantIdSchema,
  ref: imageRefSchema,
  kind: imageKindSchema,
  format: imageFormatSchema,
  compression: imageCompressionSchema,
  sha256: sha256HexSchema,
  sizeBytes: imageSizeBytesSchema,
  source: imageSourceSchema,
  signerId: imageSignerIdSchema.optional(),
  signature: imageSignatureSchema.optional(),
};

/** signerId and signature come together or not at all. */
function signerWithSignature(value: { signerId?: string; signature?: string }, ctx: z.RefinementCtx): void {
  if ((value.signerId === undefined) !== (value.signature === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [value.signerId === undefined ? 'signerId' : 'signature'],
      message: 'signerId and signature go together: pass both to register a signed image, or neither',
    });
  }
}

export const imageRegisterObject = z.object(imageFields).strict();
export const imageRegisterSchema = imageRegisterObject.superRefine(signerWithSignature);
export type ImageRegisterInput = z.infer<typeof imageRegisterSchema>;

export const imageIdSchema = idOf('image');
export const imageParamsSchema = z.object({ imageId: imageIdSchema });
export const imageGetQuerySchema = z.object({ tenantId: tenantIdSchema });
export const imagePromoteSchema = z.object({ tenantId: tenantIdSchema }).strict();

export const IMAGE_PAGE_MAX = 200;
export const imageListQuerySchema = z.object({
  tenantId: tenantIdSchema,
  kind: imageKindSchema.optional(),
  limit: z.coerce.number().int().min(1).max(IMAGE_PAGE_MAX).default(50),
  /** The last image id of the previous page. */
  cursor: imageIdSchema.optional(),
});
export type ImageListQuery = z.infer<typeof imageListQuerySchema>;

export const imageViewSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  ref: z.string(),
  kind: z.string(),
  format: z.string(),
  compression: z.string(),
  sha256: z.string(),
  sizeBytes: z.number(),
  source: z.string(),
  signerId: z.string().nullable(),
  signerTenantId: z.string().nullable(),
  signature: z.string().nullable(),
  verified: z.boolean(),
  visibility: z.enum(['private', 'public']),
  createdAt: z.string(),
});
export type ImageView = z.infer<typeof imageViewSchema>;

export const imagePageSchema = z.object({ images: z.array(imageViewSchema), nextCursor: z.string().nullable() });
export type ImagePage = z.infer<typeof imagePageSchema>;

/** Signer allowlist rows (host-only: no API method). */
export const imageSignerAddSchema = z.object({ tenantId: tenantIdSchema, id: imageSignerIdSchema, publicKeyPem: z.string().min(1).max(8192) }).strict();
export const imageSignerRevokeSchema = z.object({ tenantId: tenantIdSchema, id: imageSignerIdSchema }).strict();

export const imageSignerViewSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  algorithm: z.enum(['ed25519', 'ecdsa-p256']),
  publicKeyPem: z.string(),
  revokedAt: z.string().nullable(),
  createdAt: z.string(),
});
export type ImageSignerView = z.infer<typeof imageSignerViewSchema>;

/** What `images sign` signs: the signing input's fields. */
export const imageSigningFieldsSchema = z
  .object({ kind: imageKindSchema, ref: imageRefSchema, format: imageFormatSchema, compression: imageCompressionSchema, sha256: sha256HexSchema })
  .strict();
