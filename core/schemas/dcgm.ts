// diag.dcgm's answer (agent/common/dcgm.ts builds it, services/attestations/results.ts
// checks it): the level run, each test, and where the report came from.
import { z } from 'zod';
import { attestationSchema } from '../attestations/attestation-schema';

export const dcgmSources = ['dcgmi', 'emulated', 'no-gpus'] as const;
export const dcgmLevels = [1, 2, 3, 4] as const;

export const dcgmWithSchema = z.object({ level: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)]) }).strict();

export const dcgmResultSchema = z.object({
  level: z.number().int().min(1).max(4),
  tests: z.array(z.object({ name: z.string().max(256), passed: z.boolean(), detail: z.string().max(65_536).optional() })).max(1024),
  source: z.enum(dcgmSources),
  dcgmiVersion: z.string().max(64).nullable().optional(),
});
export type DcgmResult = z.infer<typeof dcgmResultSchema>;
/** diag.dcgm's answer: the result with the agent's attestation beside it. */
export const dcgmOutputSchema = dcgmResultSchema.extend({ attestation: attestationSchema });
