// `npm run bench` writes each figure's table into bench/README.md between its markers,
// leaving the prose around it as written.
import { readFileSync, writeFileSync } from 'node:fs';

export function replaceSection(text: string, id: string, body: string): string {
  const start = `<!-- bench:${id} -->`;
  const end = `<!-- /bench:${id} -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`bench/README.md has no ${start} … ${end} markers for this figure`);
  return `${text.slice(0, from + start.length)}\n${body.trim()}\n${text.slice(to)}`;
}

export function writeSection(file: string, id: string, body: string): void {
  writeFileSync(file, replaceSection(readFileSync(file, 'utf8'), id, body));
}
