// Profiles (spec 003 "Defining a profile"): the document's shape, and the API inputs.
// defineProfile, the API and the CLI all parse with these.
import { z } from 'zod';
import { durationPattern } from '../duration';
import { queueKinds } from '../agent-queues';
import { formatPath } from '../errors';
import { pathPastDepth } from '../json-depth';
import { labelsSchema, tenantIdSchema } from './common';

export const profileIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9.-]*$/, 'a profile id is lower-case letters, digits, dots and dashes, starting with a letter or digit');

const durationSchema = z.string().regex(durationPattern, "a duration is a whole number of s, m or h, e.g. '30s', '15m', '2h'");

const jsonObjectSchema = z.record(z.string(), z.json());

export const retriesSchema = z.union([
  z.number().int().min(0).max(50),
  z
    .object({
      max: z.number().int().min(0).max(50),
      initialInterval: durationSchema.optional(),
      backoffCoefficient: z.number().min(1).max(10).optional(),
      maxInterval: durationSchema.optional(),
    })
    .strict(),
]);

const stepFields = {
  id: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,62}$/, 'a step id is lower-case letters, digits and dashes')
    .optional(),
  use: z.string().regex(/^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$/, 'a step is named like power.setPower'),
  on: z.enum(queueKinds).optional(),
  with: jsonObjectSchema.optional(),
  timeout: durationSchema.optional(),
  retries: retriesSchema.optional(),
  await: z.enum(['rejoin', 'confirmMac']).optional(),
  onFailure: z.enum(['fail', 'continue']).optional(),
  when: z.string().min(1).max(512).optional(),
};

/** A fallback is a step of its own, without a fallback of its own. */
export const fallbackStepSchema = z.object(stepFields).strict();
export const stepSchema = z.object({ ...stepFields, fallback: fallbackStepSchema.optional() }).strict();
export type StepDocument = z.infer<typeof stepSchema>;

export const imageSchema = z
  .object({
    ref: z.string().regex(/^[a-z0-9][a-z0-9._-]*@[A-Za-z0-9._-]+$/, 'an image ref is name@version'),
    format: z.enum(['raw', 'qcow2', 'iso']),
    compression: z.enum(['none', 'zstd', 'gzip']).default('none'),
  })
  .strict();

export const userDataSchema = z
  .object({
    kind: z.enum(['cloud-init', 'ignition']),
    template: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9._-]+$/, 'a template is a file name'),
    tokenTtlSeconds: z.number().int().min(300).max(86_400).optional(),
  })
  .strict();

export const hostConfigSchema = z.record(
  z.string().regex(/^[a-z0-9][a-z0-9.-]*$/, 'a unit name is lower-case letters, digits, dots and dashes'),
  jsonObjectSchema,
);

export const vmSchema = z.object({ vcpus: z.number().int().min(1).max(512), memoryMiB: z.number().int().min(256) }).strict();

/** Fields that only one target has: naming one under the other is an error. */
export const targetOnlyFields = { metal: ['hostConfig'], vm: ['vm'] } as const;

/** A profile's version: a larger one names no stored version (and does not fit the database's integer column). */
export const profileVersionSchema = z.number().int().min(1).max(1_000_000);

export const profileDocumentSchema = z
  .object({
    id: profileIdSchema,
    version: profileVersionSchema,
    target: z.enum(['metal', 'vm']),
    description: z.string().max(1024).optional(),
    role: z.enum(['host', 'dedicated']).default('host'),
    image: imageSchema.optional(),
    userData: userDataSchema.optional(),
    hostConfig: hostConfigSchema.optional(),
    vm: vmSchema.optional(),
    steps: z.array(stepSchema).min(1).max(100),
    acceptance: z.array(stepSchema).max(50).default([]),
    cleanup: z.array(stepSchema).max(50).default([]),
  })
  .strict();
export type ProfileDocument = z.infer<typeof profileDocumentSchema>;

export const problemSchema = z.object({ path: z.string(), message: z.string() });
export type Problem = z.infer<typeof problemSchema>;

/**
 * A profile's own fields nest a few levels; free-form `with` and host-config values get room
 * up to this. Checked before anything walks a document recursively (zod, clones, our checks).
 */
export const MAX_PROFILE_DEPTH = 32;
const tooDeep = `nested deeper than ${MAX_PROFILE_DEPTH} levels`;

/** Where a document nests deeper than MAX_PROFILE_DEPTH, if it does. */
export function profileDepthProblem(document: unknown): Problem | undefined {
  const path = pathPastDepth(document, MAX_PROFILE_DEPTH);
  return path && { path: formatPath(path), message: tooDeep };
}

/** A document as the API takes it: an object, bounded in depth; checked in full by checkProfile. */
const profileDocumentInputSchema = z.record(z.string(), z.unknown()).superRefine((document, ctx) => {
  const path = pathPastDepth(document, MAX_PROFILE_DEPTH);
  if (path) ctx.addIssue({ code: 'custom', path, message: tooDeep });
});

// ---- API inputs and views ----

export const profileVisibilitySchema = z.enum(['private', 'public']);

export const profileCreateSchema = z.object({ tenantId: tenantIdSchema, document: profileDocumentInputSchema, public: z.boolean().default(false) }).strict();

export const profileUpdateSchema = z
  .object({
    tenantId: tenantIdSchema,
    version: profileVersionSchema.optional(),
    document: profileDocumentInputSchema.optional(),
    visibility: profileVisibilitySchema.optional(),
    ifVersion: z.number().int().min(1).optional(),
  })
  .strict()
  .refine((v) => (v.document === undefined) !== (v.visibility === undefined), {
    message: 'give either a replacement document or a visibility',
    path: ['document'],
  });

export const profileVersionQuerySchema = z.object({ tenantId: tenantIdSchema, version: z.coerce.number().pipe(profileVersionSchema).optional() });

export const profileViewSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  version: z.number(),
  visibility: z.enum(['private', 'public', 'builtin']),
  locked: z.boolean(),
  rowVersion: z.number(),
  document: z.record(z.string(), z.unknown()),
});
export type ProfileView = z.infer<typeof profileViewSchema>;

export const profileValidationSchema = z.object({ id: z.string(), version: z.number(), valid: z.boolean(), problems: z.array(problemSchema) });

export const profileRunSchema = z
  .object({
    tenantId: tenantIdSchema,
    nodeId: z.string().min(1).max(64),
    version: profileVersionSchema.optional(),
    provisionState: z
      .string()
      .regex(/^[a-z-]+$/)
      .max(32)
      .default('deploying'),
    labels: labelsSchema.default({}),
  })
  .strict();

export const workflowStatusQuerySchema = z.object({ tenantId: tenantIdSchema });
