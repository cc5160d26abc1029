// Named (server-side prepared) statements on PostgreSQL for the raw statements every API read
// and agent request makes (services/raw-statements.ts). Prisma's pg adapter sends each
// statement unnamed, so PostgreSQL parses and plans it afresh every time: planning a page of
// nodes took 0.4-0.5 ms of the server's CPU, more than running it (bench/README.md, "The
// API"). node-postgres prepares a named statement once per connection and keeps it for the
// connection's life, without bound; so only the raw statements' texts are named (our code
// builds them from a few shapes), and no more than MAX_NAMED_STATEMENTS of them: past that a
// text runs unnamed, as before. Prisma's own queries vary with their IN lists and stay
// unnamed. A pooler in transaction mode (PgBouncer before 1.21, or without
// max_prepared_statements) cannot carry named statements: docs/operations.md says so.
import { createHash } from 'node:crypto';

/** Distinct texts named, per process: each connection prepares at most these. */
export const MAX_NAMED_STATEMENTS = 200;

const names = new Map<string, string>();

/** Marks `text` to run as a named statement, while there is room; raw statements call this for each text they send. */
export function nameStatement(text: string): void {
  if (names.size >= MAX_NAMED_STATEMENTS || names.has(text)) return;
  // PostgreSQL names are at most 63 bytes; 20 hex digits of a hash tell the texts apart.
  names.set(text, `ironflow_${createHash('sha256').update(text).digest('hex').slice(0, 20)}`);
}

/** The name `text` runs under, or undefined: it runs unnamed. */
export function statementName(text: string): string | undefined {
  return names.get(text);
}
