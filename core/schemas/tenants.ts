import { z } from 'zod';
import { tenantIdSchema } from './common';

/**
 * A name people read in lists and logs: any script, but no control characters (NUL, line
 * breaks, tabs, C1) and no bidirectional controls, which can make a name display as another.
 */
export const displayNameSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(
    /^[^\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]+$/u,
    'a name holds no control characters (NUL, line breaks, tabs) and no bidirectional controls',
  );

export const tenantCreateSchema = z.object({ id: tenantIdSchema, name: displayNameSchema }).strict();
