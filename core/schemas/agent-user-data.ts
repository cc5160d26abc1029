// POST /v1/agents/user-data: a ramdisk fetches the user data userdata.render sealed for the
// deploy it is running (deploy.image carries only the reference), to write it onto the
// machine for the installed OS's first boot.
import { z } from 'zod';
import { idOf } from './common';

export const userDataRequestSchema = z
  .object({
    nodeId: idOf('node'),
    workflowId: z.string().min(1).max(512),
    ref: z
      .string()
      .regex(/^sec_[A-Za-z0-9]+$/, 'a secret-store reference sec_…')
      .max(64),
  })
  .strict();
export type UserDataRequest = z.infer<typeof userDataRequestSchema>;

export const userDataAnswerSchema = z.object({ kind: z.enum(['cloud-init', 'ignition']), document: z.string() });
export type UserDataAnswer = z.infer<typeof userDataAnswerSchema>;
