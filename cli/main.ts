// `ironflow <command words> [flags]`. Global flags: --format table|json, --api URL, --ca-file FILE.
import { z } from 'zod';
import { isIronflowError } from '../core/errors';
import type { Command } from './command';
import { commands } from './commands';
import { createCliContext } from './context';
import { withCredentialHint } from './credential-source';
import { fieldKind, kebab } from './flags';
import { parseFlags } from './flags';
import { render } from './output';

const globalFlags = z.object({ format: z.enum(['table', 'json']).default('table'), api: z.string().url().optional(), caFile: z.string().min(1).optional() });

function splitGlobals(argv: string[]): { globals: string[]; rest: string[] } {
  const globals: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.replace(/^--/, '').split('=')[0];
    if (arg.startsWith('--') && (name === 'format' || name === 'api' || name === 'ca-file')) {
      globals.push(arg);
      if (!arg.includes('=')) globals.push(argv[++i] ?? '');
    } else rest.push(arg);
  }
  return { globals, rest };
}

function findCommand(words: string[]): { command: Command; args: string[] } | undefined {
  const sorted = [...commands].sort((a, b) => b.name.split(' ').length - a.name.split(' ').length);
  for (const command of sorted) {
    const parts = command.name.split(' ');
    if (parts.every((p, i) => words[i] === p)) return { command, args: words.slice(parts.length) };
  }
  return undefined;
}

function help(command?: Command): string {
  if (!command) {
    const width = Math.max(...commands.map((c) => c.name.length));
    return [
      'usage: ironflow <command> [flags] [--format table|json] [--api URL] [--ca-file FILE]',
      '',
      ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    ].join('\n');
  }
  const shape = command.flags.shape as Record<string, z.ZodType>;
  const flagLines = Object.entries(shape)
    .filter(([key]) => !command.positionals?.includes(key))
    .map(
      ([key, schema]) =>
        `  --${kebab(key).replace(/-id$/, '')}${fieldKind(schema) === 'boolean' ? '' : ' VALUE'}${schema.safeParse(undefined).success ? '' : '  (required)'}`,
    );
  const positional = (command.positionals ?? []).map((p) => `<${kebab(p)}>`).join(' ');
  return [`usage: ironflow ${command.name} ${positional}`.trimEnd(), command.summary, '', ...flagLines].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const { globals, rest } = splitGlobals(argv);
  if (rest.length === 0 || rest[0] === 'help' || rest[0] === '--help') {
    const found = findCommand(rest.slice(1));
    process.stdout.write(`${help(found?.command)}\n`);
    return 0;
  }
  const found = findCommand(rest);
  if (!found) {
    process.stderr.write(`ironflow: unknown command "${rest.join(' ')}"\n\n${help()}\n`);
    return 2;
  }
  if (found.args.includes('--help')) {
    process.stdout.write(`${help(found.command)}\n`);
    return 0;
  }
  const global = parseFlags(globalFlags, globals);
  const ctx = createCliContext({ format: global.format, apiUrl: global.api, caFile: global.caFile });
  const input = parseFlags(found.command.flags, found.args, found.command.positionals as string[] | undefined);
  const result = await found.command.run(ctx, input).catch((err: unknown) => {
    throw isIronflowError(err) && err.code === 'UNAUTHENTICATED' ? withCredentialHint(err, ctx.credentialFrom) : err;
  });
  if (result !== undefined) process.stdout.write(`${render(result, ctx.format, found.command.table)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (isIronflowError(err)) {
      const path = err.details.path ? ` (at ${err.details.path})` : '';
      process.stderr.write(`ironflow: ${err.code}: ${err.message}${path}\n`);
    } else {
      process.stderr.write(`ironflow: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    process.exit(1);
  },
);
