// A step's answer read by its output schema in the registry, never recognised by its shape:
// the lifecycle, the attestation check and a relay's second half look the schema up by `use`.
import type { z } from 'zod';
import { stepRegistry, type KnownStep, type KnownUse } from './builtin';
import { shapeOf, type StepQueue } from './registry';

/** What a step answers (its own output schema's type; the site agent's command shapes aside). */
export type OutputOf<U extends KnownUse> = z.output<Extract<KnownStep, { use: U }>['output']>;

export type ParsedOutput<T> = { success: true; output: T } | { success: false; problem: string };

const problemOf = (error: z.ZodError): string => {
  const issue = error.issues[0];
  return issue ? `${issue.path.join('.') || 'output'}: ${issue.message}` : 'not its output';
};

/** The output schema of `use` on `queue`, or undefined for a step this registry does not know. */
export function outputSchemaOf(use: string, queue: StepQueue): z.ZodType | undefined {
  const definition = stepRegistry.get(use);
  return definition ? shapeOf(definition, queue).output : undefined;
}

/** Parses a known step's answer by its output schema. */
export function parseOutput<U extends KnownUse>(use: U, value: unknown): ParsedOutput<OutputOf<U>> {
  const definition = stepRegistry.get(use);
  if (!definition) throw new Error(`step ${use} is not registered`);
  const parsed = definition.output.safeParse(value);
  return parsed.success ? { success: true, output: parsed.data as OutputOf<U> } : { success: false, problem: problemOf(parsed.error) };
}
