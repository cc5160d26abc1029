// The node's host converger, as far as it goes today: it takes the desired host section the
// session delivers (Node.hostSpec), decides per unit what it would do — a unit this agent
// knows is applied in order, any other is a terminal failure once the known ones had their
// turn (spec 003) — and reports that state (log, host-state.json, inventory.refresh). It
// does not yet write the units' files on the host: that is each unit's own work, to come.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { hostConfigUnits, type HostConfigUnitRegistry } from '../../core/host-config/units';
import type { AgentLog } from '../site/log';

export interface HostUnitState {
  name: string;
  state: 'converged' | 'failed';
  reason?: string;
}

export interface HostState {
  /** The workflow whose success set the spec this state answers. */
  workflowId: string | null;
  profile: string | null;
  units: HostUnitState[];
  convergedAt: string;
}

interface SpecUnit {
  name: string;
  settings: Record<string, unknown>;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class HostConverger {
  private current: HostState | undefined;
  private lastSpecKey: string | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly log: AgentLog,
    private readonly registry: HostConfigUnitRegistry = hostConfigUnits,
  ) {}

  state(): HostState | undefined {
    return this.current;
  }

  /** Converges to the spec when it changed since the last pass. */
  converge(spec: Record<string, unknown> | null | undefined): HostState | undefined {
    const key = JSON.stringify(spec ?? null);
    if (key === this.lastSpecKey) return this.current;
    this.lastSpecKey = key;
    if (!spec) return (this.current = undefined);
    const units = (Array.isArray(spec.units) ? spec.units : []).filter(isObj) as unknown as SpecUnit[];
    const known = units.filter((u) => this.registry.get(u.name));
    const unknown = units.filter((u) => !this.registry.get(u.name));
    const results: HostUnitState[] = [];
    for (const unit of known) {
      const parsed = this.registry.get(unit.name)?.settings.safeParse(unit.settings);
      results.push(parsed?.success ? { name: unit.name, state: 'converged' } : { name: unit.name, state: 'failed', reason: 'settings do not check' });
    }
    for (const unit of unknown) results.push({ name: unit.name, state: 'failed', reason: `unknown unit ${unit.name}: this agent applies only ${this.registry.names().join(', ')}` });
    this.current = {
      workflowId: typeof spec.workflowId === 'string' ? spec.workflowId : null,
      profile: typeof spec.profile === 'string' ? spec.profile : null,
      units: results,
      convergedAt: new Date().toISOString(),
    };
    writeFileSync(path.join(this.dataDir, 'host-state.json'), `${JSON.stringify(this.current, null, 2)}\n`, { mode: 0o644 });
    this.log.info('host spec converged', { workflowId: this.current.workflowId, units: results.map((u) => `${u.name}:${u.state}`) });
    return this.current;
  }
}
