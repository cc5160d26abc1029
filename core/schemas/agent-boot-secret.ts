// POST /v1/agents/boot-secret: the site agent fetches a boot entry's discovery token (the
// bearer) for the workflow step that sent the entry, by the entry's reference. The agent
// keeps it in memory and renders it into that MAC's iPXE script only.
// POST /v1/agents/boot-secret/release: boot.cleanUp's half on the control plane: the
// workflow's discovery tokens are revoked and their stored bearers deleted.
import { z } from 'zod';
import { idOf } from './common';

export const bootSecretRequestSchema = z
  .object({
    nodeId: idOf('node'),
    workflowId: z.string().min(1).max(512),
    ref: z
      .string()
      .regex(/^sec_[A-Za-z0-9]+$/, 'a secret-store reference sec_…')
      .max(64),
  })
  .strict();
export type BootSecretRequest = z.infer<typeof bootSecretRequestSchema>;

export const bootSecretAnswerSchema = z.object({ token: z.string(), expiresAt: z.string() });
export type BootSecretAnswer = z.infer<typeof bootSecretAnswerSchema>;

export const bootSecretReleaseSchema = z
  .object({
    nodeId: idOf('node'),
    workflowId: z.string().min(1).max(512),
  })
  .strict();
export type BootSecretRelease = z.infer<typeof bootSecretReleaseSchema>;

export const bootSecretReleaseAnswerSchema = z.object({ revoked: z.number().int(), deleted: z.number().int() });
