// argv → an object for a zod schema: `--max-uses 2` → { maxUses: '2' } (the schema
// coerces), `--public` → { public: true } for boolean fields, repeated flags → arrays.
import { z } from 'zod';
import { IronflowError } from '../core/errors';

const camel = (flag: string) => flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function unwrap(schema: z.ZodType): z.ZodType {
  let current: z.ZodType = schema;
  for (;;) {
    const def = (current as unknown as { _zod: { def: { type: string; innerType?: z.ZodType; in?: z.ZodType } } })._zod.def;
    if ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable' || def.type === 'prefault') && def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else return current;
  }
}

export function fieldKind(schema: z.ZodType): 'boolean' | 'array' | 'number' | 'value' {
  const type = (unwrap(schema) as unknown as { _zod: { def: { type: string } } })._zod.def.type;
  if (type === 'boolean') return 'boolean';
  if (type === 'array') return 'array';
  if (type === 'number' || type === 'int' || type === 'bigint') return 'number';
  return 'value';
}

function parseArgv(schema: z.ZodObject, argv: string[], positionals: string[] = []): Record<string, unknown> {
  const shape = schema.shape as Record<string, z.ZodType>;
  const out: Record<string, unknown> = {};
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const [rawName, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    // `--tenant`, `--site`, `--pool`, `--node` name the …Id fields, as in the spec's CLI.
    const key = shape[camel(rawName)] ? camel(rawName) : shape[`${camel(rawName)}Id`] ? `${camel(rawName)}Id` : camel(rawName);
    const field = shape[key];
    if (!field) throw new IronflowError('INVALID_INPUT', `unknown flag --${rawName}`, { path: key });
    const kind = fieldKind(field);
    if (kind === 'boolean') {
      out[key] = inline === undefined ? true : inline !== 'false';
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new IronflowError('INVALID_INPUT', `--${rawName} needs a value`, { path: key });
    const typed = kind === 'number' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    if (kind === 'array') out[key] = [...((out[key] as unknown[]) ?? []), typed];
    else out[key] = typed;
  }
  if (words.length > positionals.length) throw new IronflowError('INVALID_INPUT', `unexpected argument ${words[positionals.length]}`);
  words.forEach((word, i) => {
    const key = positionals[i] as string;
    out[key] = fieldKind(shape[key] as z.ZodType) === 'number' && /^\d+$/.test(word) ? Number(word) : word;
  });
  return out;
}

export function parseFlags<S extends z.ZodObject>(schema: S, argv: string[], positionals: string[] = []): z.output<S> {
  const raw = parseArgv(schema, argv, positionals);
  const result = schema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = String(issue?.path[0] ?? '');
    const where = positionals.includes(key) ? `<${kebab(key)}>` : `--${kebab(key).replace(/-id$/, '')}`;
    throw new IronflowError('INVALID_INPUT', `${where}: ${issue?.message ?? 'invalid'}`, { path: key });
  }
  return result.data;
}
