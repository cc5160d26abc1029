#!/usr/bin/env node
// `tctl` for runbooks written for it: the Go module proxy serves no tctl, and the Temporal CLI
// is its successor. scripts/setup.sh links this file as .tools/bin/tctl; it translates tctl's
// `workflow signal|query|show|list|describe` flags (scripts/lib/tctl-args.mjs) and runs
// .tools/bin/temporal with them, passing its output and exit code through. Anything it does
// not understand is refused with exit code 2, naming the `temporal` command to use instead.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TctlUsageError, translateTctl, USAGE } from './lib/tctl-args.mjs';

// Node runs a symlinked main module from its real path, so this is the repository's scripts/.
const temporal = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '.tools', 'bin', 'temporal');

let translation;
try {
  translation = translateTctl(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof TctlUsageError)) throw err;
  process.stderr.write(`tctl: ${err.message}\n`);
  process.exit(2);
}
if (translation === 'help') {
  process.stdout.write(USAGE);
  process.exit(0);
}

/** @type {'inherit' | number} */
let stdout = 'inherit';
if (translation.outputFile !== undefined) {
  try {
    stdout = openSync(translation.outputFile, 'w');
  } catch (err) {
    process.stderr.write(`tctl: cannot write --output_filename ${translation.outputFile}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
const child = spawn(temporal, translation.argv, { stdio: ['inherit', stdout, 'inherit'] });
if (typeof stdout === 'number') closeSync(stdout);
// A signal meant for this command (a supervisor's SIGTERM, say) is meant for the request.
/** @type {NodeJS.Signals[]} */
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const name of forwarded) process.on(name, () => child.kill(name));
child.on('error', (err) => {
  const missing = /** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT';
  process.stderr.write(
    missing ? `tctl: ${temporal} is missing: run \`npm run setup\` (it builds the Temporal CLI)\n` : `tctl: cannot run ${temporal}: ${err.message}\n`,
  );
  process.exit(missing ? 127 : 1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // End the way the request ended, so a caller sees the same signal.
    for (const name of forwarded) process.removeAllListeners(name);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
