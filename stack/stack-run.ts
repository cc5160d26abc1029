// What `npm start` (stack/dev-stack.ts) and `npm run start:cluster` (stack/cluster-stack.ts)
// share: their output, stopping everything on Ctrl-C in order, and what they say of the
// control plane once it is up.
import { constants } from 'node:os';
import { defaultApiLog } from '../api/log-file';
import type { ControlPlane } from './control-plane';

export const say = (line: string): void => void process.stdout.write(`${line}\n`);

/** Parts started so far, stopped last-started first on SIGINT/SIGTERM (or by `stopAll`), each once; a second signal while they stop exits at once. */
export class StackParts {
  private readonly parts: Array<{ name: string; stop: () => Promise<void> }> = [];
  private stopping = false;

  constructor(private readonly names: string) {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => this.onSignal(signal));
  }

  /** The first signal stops every part, then exits; a second while they stop exits at once, saying so. */
  private onSignal(signal: 'SIGINT' | 'SIGTERM'): void {
    if (this.stopping) {
      say(`ironflow: ${signal} again: exiting without waiting for the rest to stop.`);
      process.exit(128 + constants.signals[signal]); // the shell's code for death by that signal: 130, 143
    }
    void this.stopAll(signal).then(() => process.exit(0));
  }

  add(name: string, stop: () => Promise<void>): void {
    this.parts.push({ name, stop });
  }

  async stopAll(reason: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    say(`\nironflow: ${reason}: stopping ${this.names}…`);
    for (const part of this.parts.reverse()) await part.stop().catch((err: unknown) => say(`ironflow: stopping ${part.name}: ${String(err)}`));
    say('ironflow: stopped.');
  }
}

/** The API, the gateway, then the stack's own `lines` (Temporal, workers), the API log and the root credential. */
export function announceControlPlane(controlPlane: ControlPlane, lines: string[]): void {
  const { config } = controlPlane;
  say(`ironflow: API          ${controlPlane.url}  (OpenAPI UI: ${controlPlane.url}/docs)`);
  say(`ironflow: gateway      ${controlPlane.gateway.address}  (agents reach Temporal here, mTLS)`);
  for (const line of lines) say(line);
  say(`ironflow: API log      ${defaultApiLog(config.dataDir).file}  (level ${process.env.IRONFLOW_LOG_LEVEL ?? 'info'}: IRONFLOW_LOG_LEVEL)`);
  if (controlPlane.rootCredential.created) {
    say(`ironflow: root credential (shown once; also in ${controlPlane.rootCredential.file}, mode 0600):`);
    say(`  ${controlPlane.rootCredential.bearer}`);
  } else {
    say(`ironflow: root credential in ${controlPlane.rootCredential.file}`);
  }
}

/** Prints why the start failed and exits 1. */
export function startFailed(err: unknown): never {
  process.stderr.write(`ironflow: start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
