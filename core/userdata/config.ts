// The user data configuration (the spec's provisionModule({ userData })), checked when it
// is configured: URL, digest and pin formats, a full set of pins or none, and custom string
// templates whose placeholders all have a value. Anything else is INVALID_CONFIG.
import { z } from 'zod';
import { fromZodError } from '../errors';
import { agentSha256Schema, agentUrlSchema, controlPlaneUrlSchema, pinNames, pinsSchema, variableNames, type UserDataVariables } from './values';

/** A string with {{name}} placeholders, or a function of the variables. */
export type UserDataTemplate = string | ((vars: Readonly<UserDataVariables>) => string);

export const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

export function placeholdersOf(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '');
}

export const shippedTemplateNames = ['ironflow-host.yaml', 'ironflow-host.ign'] as const;

/** Template names are checked in the superRefine below: zod reports a bad record key only as "Invalid key in record". */
const templateNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const templateSchema = z.union([
  z.string().min(1).max(65_536),
  z.custom<(vars: Readonly<UserDataVariables>) => string>((value) => typeof value === 'function', 'a template is a string or a function of the variables'),
]);

export const userDataConfigSchema = z
  .object({
    controlPlaneUrl: controlPlaneUrlSchema.optional(),
    agentUrl: agentUrlSchema.optional(),
    agentSha256: agentSha256Schema.optional(),
    pins: pinsSchema.optional(),
    templates: z.record(z.string(), templateSchema).optional(),
    tokenTtlSeconds: z.number().int().min(300).max(86_400).default(7_200),
  })
  .strict()
  .superRefine((config, ctx) => {
    for (const [name, template] of Object.entries(config.templates ?? {})) {
      if (!templateNamePattern.test(name)) ctx.addIssue({ code: 'custom', path: ['templates', name], message: 'a template name is letters, digits, . _ -' });
      if ((shippedTemplateNames as readonly string[]).includes(name)) {
        ctx.addIssue({ code: 'custom', path: ['templates', name], message: 'this name belongs to a shipped template; choose another' });
      }
      if (typeof template !== 'string') continue;
      for (const placeholder of placeholdersOf(template)) {
        const known = (variableNames as readonly string[]).includes(placeholder);
        const pinWithoutPins = (pinNames as readonly string[]).includes(placeholder) && !config.pins;
        if (!known || pinWithoutPins) {
          ctx.addIssue({
            code: 'custom',
            path: ['templates', name],
            message: `placeholder {{${placeholder}}} has no value${pinWithoutPins ? ' (configure pins)' : `; the variables are ${variableNames.join(', ')}`}`,
          });
        }
      }
    }
  });

export type UserDataConfigInput = z.input<typeof userDataConfigSchema>;
export type UserDataConfig = z.output<typeof userDataConfigSchema>;

/** Checks a user data configuration, INVALID_CONFIG with details.path naming the field (under `userData`). */
export function checkUserDataConfig(config: unknown): UserDataConfig {
  const result = userDataConfigSchema.safeParse(config ?? {});
  if (result.success) return result.data;
  throw fromZodError(result.error, 'INVALID_CONFIG', 'userData');
}
