// The attestation an agent signs beside a step result (services/attestations/attestation.ts
// signs and verifies it): pure data, so step output schemas (core/steps) can name it.
import { z } from 'zod';

const base64 = /^[A-Za-z0-9+/]+={0,2}$/;
export const attestationSchema = z
  .object({
    v: z.literal(1),
    /** The signing certificate, DER in base64 (the control plane finds its record by fingerprint). */
    certificate: z.string().max(8192).regex(base64),
    issuedAt: z.iso.datetime(),
    signature: z.string().max(1024).regex(base64),
  })
  .strict();
export type Attestation = z.infer<typeof attestationSchema>;
