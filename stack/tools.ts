// Where the setup puts the binaries it builds (git-ignored).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../services/config';

const toolsBin = path.join(repoRoot, '.tools', 'bin');

export function toolPath(name: 'temporal' | 'tctl'): string {
  return path.join(toolsBin, name);
}

export function requireTool(name: 'temporal' | 'tctl'): string {
  const file = toolPath(name);
  const how = name === 'temporal' ? 'it builds the Temporal CLI from the Go module proxy' : 'it links the tctl compatibility command, scripts/tctl-compat.mjs';
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run setup\` (${how})`);
  return file;
}
