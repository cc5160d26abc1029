// A CLI command: its words, its flags as a zod object (the same schema the API parses,
// or one built from it), and what it does. main.ts parses argv into the schema.
import type { z } from 'zod';
import type { CliContext } from './context';

export interface Column {
  header: string;
  /** Reads the cell from one row of the command's result. */
  value: (row: Record<string, unknown>) => unknown;
}

export interface Command<S extends z.ZodObject = z.ZodObject> {
  /** e.g. `sites create` */
  name: string;
  summary: string;
  flags: S;
  /** Flag names (camelCase keys of `flags`) filled from positional words, in order. */
  positionals?: Array<keyof z.infer<S> & string>;
  run(ctx: CliContext, input: z.infer<S>): Promise<unknown>;
  /** How `--format table` shows the result: rows and columns. Without it, key/value. */
  table?: { rows?: (result: unknown) => Array<Record<string, unknown>>; columns: Column[] };
}

export function defineCommand<S extends z.ZodObject>(command: Command<S>): Command {
  return command as unknown as Command;
}
