// The node's host converger: it takes the desired host section the session delivers
// (Node.hostSpec) and applies each unit on the host under its root (agent/node/host-units.ts,
// host-actions.ts) — known units in order, any other a terminal failure once the known ones
// had their turn (spec 003) — then reports what it found and did (log, host-state.json,
// inventory.refresh). A pass runs when the spec changes and again every recheck interval,
// which is how a file changed by hand is found (drifted) and set back. A unit is `converged`
// only when all its actions are done; `pending` (a systemd unit where systemd does not run
// the root), `unsupported` (packages without a package manager) and `failed` say why not.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { hostConfigUnits, type HostConfigUnitRegistry } from '../../core/host-config/units';
import type { AgentLog } from '../common/log';
import { applyAction, MAX_HOST_FILE_BYTES, type ActionOutcome, type HostAction } from './host-actions';
import type { HostRoot } from './host-root';
import { hostUnitActions, isBuiltinUnit } from './host-units';

type HostUnitStatus = 'converged' | 'pending' | 'unsupported' | 'failed';

interface HostUnitState {
  name: string;
  state: HostUnitStatus;
  reason?: string;
  /** This pass changed the host for the unit. */
  changed: boolean;
  /** Host files found changed by hand since this agent wrote them (set back by this pass). */
  drifted: string[];
  /** What this unit changed takes effect at the next boot (kernel command line). */
  rebootRequired: boolean;
}

export interface HostState {
  /** The workflow whose success set the spec this state answers. */
  workflowId: string | null;
  profile: string | null;
  root: string;
  units: HostUnitState[];
  /** Whether this pass changed anything on the host (false: the host was as the spec says). */
  changed: boolean;
  convergedAt: string;
  /** Host path → sha256 of what the agent wrote: how the next pass tells drift from a new spec. */
  applied: Record<string, string>;
}

interface SpecUnit {
  name: string;
  settings: Record<string, unknown>;
}

const MAX_UNITS = 64;
const DEFAULT_RECHECK_MS = 60_000;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function loadApplied(file: string): Record<string, string> {
  try {
    const state = JSON.parse(readFileSync(file, 'utf8').slice(0, 1 << 20)) as { applied?: unknown };
    return isObj(state.applied) ? (Object.fromEntries(Object.entries(state.applied).filter(([, v]) => typeof v === 'string')) as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** One unit's state from its actions' outcomes: failed, then unsupported, then pending, else converged. */
function unitState(name: string, outcomes: ActionOutcome[]): HostUnitState {
  const first = (key: 'failed' | 'unsupported' | 'pending') => outcomes.find((o) => o[key])?.[key];
  const state: HostUnitStatus = first('failed') ? 'failed' : first('unsupported') ? 'unsupported' : first('pending') ? 'pending' : 'converged';
  const reason = first('failed') ?? first('unsupported') ?? first('pending');
  return {
    name,
    state,
    ...(reason ? { reason } : {}),
    changed: outcomes.some((o) => o.changed),
    drifted: outcomes.flatMap((o) => o.drifted),
    rebootRequired: outcomes.some((o) => o.rebootRequired && o.changed),
  };
}

interface HostConvergerOptions {
  registry?: HostConfigUnitRegistry;
  /** How often an unchanged spec is applied again (drift). */
  recheckMs?: number;
}

export class HostConverger {
  private current: HostState | undefined;
  private lastSpecKey: string | undefined;
  private lastPassAt = 0;
  private running: Promise<HostState | undefined> | undefined;
  private applied: Record<string, string>;
  private readonly stateFile: string;
  private readonly registry: HostConfigUnitRegistry;
  private readonly recheckMs: number;

  constructor(
    dataDir: string,
    readonly root: HostRoot,
    private readonly log: AgentLog,
    options: HostConvergerOptions = {},
  ) {
    this.stateFile = path.join(dataDir, 'host-state.json');
    this.applied = loadApplied(this.stateFile);
    this.registry = options.registry ?? hostConfigUnits;
    this.recheckMs = options.recheckMs ?? DEFAULT_RECHECK_MS;
  }

  state(): HostState | undefined {
    return this.current;
  }

  /** The session's every answer: a pass starts when the spec changed or a recheck is due, never two at once. */
  offer(spec: Record<string, unknown> | null | undefined): void {
    if (this.running) return;
    const changed = JSON.stringify(spec ?? null) !== this.lastSpecKey;
    if (!changed && Date.now() - this.lastPassAt < this.recheckMs) return;
    this.converge(spec).catch((error: unknown) =>
      this.log.error('host converger pass failed; retried at the next recheck', { error: (error as Error).message }),
    );
  }

  /** Applies the spec now (after a pass that runs) and answers the state it leaves. */
  async converge(spec: Record<string, unknown> | null | undefined): Promise<HostState | undefined> {
    while (this.running) await this.running;
    this.running = this.pass(spec).finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(spec: Record<string, unknown> | null | undefined): Promise<HostState | undefined> {
    this.lastSpecKey = JSON.stringify(spec ?? null);
    this.lastPassAt = Date.now();
    if (!spec) return (this.current = undefined);
    const units = (Array.isArray(spec.units) ? spec.units : []).filter(isObj) as unknown as SpecUnit[];
    const known = units.filter((u) => this.registry.get(u.name));
    const unknown = units.filter((u) => !this.registry.get(u.name));
    const results: HostUnitState[] = [];
    const applied: Record<string, string> = {};
    for (const [index, unit] of known.entries()) {
      if (index >= MAX_UNITS) {
        results.push({
          name: unit.name,
          state: 'failed',
          reason: `more than ${MAX_UNITS} units: not applied`,
          changed: false,
          drifted: [],
          rebootRequired: false,
        });
        continue;
      }
      const outcomes = await this.applyUnit(unit);
      for (const o of outcomes) Object.assign(applied, o.applied);
      results.push(unitState(unit.name, outcomes));
    }
    for (const unit of unknown) {
      results.push({
        name: unit.name,
        state: 'failed',
        reason: `unknown unit ${unit.name}: this agent applies only ${this.registry.names().join(', ')}`,
        changed: false,
        drifted: [],
        rebootRequired: false,
      });
    }
    this.applied = applied;
    this.current = {
      workflowId: typeof spec.workflowId === 'string' ? spec.workflowId : null,
      profile: typeof spec.profile === 'string' ? spec.profile : null,
      root: this.root.dir,
      units: results,
      changed: results.some((u) => u.changed),
      convergedAt: new Date().toISOString(),
      applied,
    };
    writeFileSync(this.stateFile, `${JSON.stringify(this.current, null, 2)}\n`, { mode: 0o644 });
    const drifted = results.flatMap((u) => u.drifted);
    if (drifted.length > 0) this.log.warn('host drift found and set back', { drifted });
    if (this.current.changed || drifted.length > 0)
      this.log.info('host spec applied', { workflowId: this.current.workflowId, units: results.map((u) => `${u.name}:${u.state}`) });
    return this.current;
  }

  private async applyUnit(unit: SpecUnit): Promise<ActionOutcome[]> {
    const failed = (reason: string): ActionOutcome[] => [{ changed: false, drifted: [], rebootRequired: false, applied: {}, failed: reason }];
    const parsed = this.registry.get(unit.name)?.settings.safeParse(unit.settings);
    if (!parsed?.success) return failed('settings do not check');
    if (!isBuiltinUnit(unit.name)) return failed(`unit ${unit.name} is registered, but this agent has no way to apply it`);
    const actions = (hostUnitActions[unit.name] as (settings: unknown) => HostAction[])(parsed.data);
    const outcomes: ActionOutcome[] = [];
    for (const action of actions) {
      if ((action.kind === 'file' || action.kind === 'systemd') && Buffer.byteLength(action.content) > MAX_HOST_FILE_BYTES) {
        outcomes.push(...failed(`a file of more than ${MAX_HOST_FILE_BYTES} bytes is refused`));
        continue;
      }
      outcomes.push(await applyAction(this.root, action, this.applied));
    }
    return outcomes;
  }
}
