// Prints a command's result as JSON or as a table.
import type { Column } from './command';

export type OutputFormat = 'table' | 'json';

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function renderTable(rows: Array<Record<string, unknown>>, columns: Column[]): string {
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n');
}

function renderKeyValues(value: Record<string, unknown>): string {
  const width = Math.max(0, ...Object.keys(value).map((k) => k.length));
  return Object.entries(value)
    .map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`)
    .join('\n');
}

export function render(result: unknown, format: OutputFormat, table?: { rows?: (r: unknown) => Array<Record<string, unknown>>; columns: Column[] }): string {
  if (format === 'json') return JSON.stringify(result, null, 2);
  if (table) return renderTable(table.rows ? table.rows(result) : (result as Array<Record<string, unknown>>), table.columns);
  if (result && typeof result === 'object' && !Array.isArray(result)) return renderKeyValues(result as Record<string, unknown>);
  return cell(result);
}
