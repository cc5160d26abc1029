// A deployed node's desired host state (its NodeSpec host section): the deploy profile's
// hostConfig units, each replaced by the pool's unit of the same concern (policy.hugepages,
// policy.kernelModules, …), kept when its `when` matches the node's labels, with settings
// checked by the unit's schema. Known units come in apply order, unknown ones after them
// (the node reports those as a terminal failure once it applied the others).
import { IronflowError, fromZodError } from '../errors';
import { labelsMatch } from '../label-expr';
import type { JsonObject, JsonValue } from '../plan';
import { hostConfigUnits, poolUnitFields, type BuiltinUnitName, type HostConfigUnitRegistry } from './units';

export interface HostSpecUnit {
  name: string;
  /** Where it came from: the profile's hostConfig or the pool's policy. */
  source: 'profile' | 'pool';
  /** Whether a registered unit (false: the node reports it unknown). */
  known: boolean;
  settings: JsonObject;
}

export interface HostSpec {
  /** The provision workflow whose success set it. */
  workflowId: string;
  profile: string;
  units: HostSpecUnit[];
  /** Units whose `when` did not match the node's labels. */
  skipped: string[];
}

const isObject = (v: unknown): v is Record<string, JsonValue> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface HostSpecInput {
  workflowId: string;
  profile: string;
  hostConfig?: Record<string, unknown> | undefined;
  poolPolicy?: Record<string, unknown> | undefined;
  labels: Record<string, string>;
  registry?: HostConfigUnitRegistry;
}

/** Checks one unit (with its `when`) and returns its settings; INVALID_CONFIG with `path` otherwise. */
export function checkUnit(
  name: string,
  raw: unknown,
  path: string,
  registry: HostConfigUnitRegistry = hostConfigUnits,
): { when?: string; settings: JsonObject; known: boolean } {
  if (!isObject(raw)) throw new IronflowError('INVALID_CONFIG', `${path}: a unit is an object of settings`, { path });
  const { when, ...rest } = raw;
  if (when !== undefined && typeof when !== 'string')
    throw new IronflowError('INVALID_CONFIG', `${path}.when: a label expression string`, { path: `${path}.when` });
  if (typeof when === 'string') {
    try {
      labelsMatch(when, {});
    } catch (error) {
      throw new IronflowError('INVALID_CONFIG', `${path}.when: ${(error as Error).message}`, { path: `${path}.when` });
    }
  }
  const unit = registry.get(name);
  if (!unit) return { ...(when ? { when } : {}), settings: rest as JsonObject, known: false };
  const parsed = unit.settings.safeParse(rest);
  if (!parsed.success) throw fromZodError(parsed.error, 'INVALID_CONFIG', path);
  return { ...(when ? { when } : {}), settings: parsed.data as JsonObject, known: true };
}

export function resolveHostSpec(input: HostSpecInput): HostSpec {
  const registry = input.registry ?? hostConfigUnits;
  const chosen = new Map<string, { raw: unknown; source: 'profile' | 'pool'; path: string }>();
  for (const [name, raw] of Object.entries(input.hostConfig ?? {})) chosen.set(name, { raw, source: 'profile', path: `hostConfig.${name}` });
  for (const [name, field] of Object.entries(poolUnitFields) as Array<[BuiltinUnitName, string]>) {
    const raw = input.poolPolicy?.[field];
    if (raw !== undefined && raw !== null) chosen.set(name, { raw, source: 'pool', path: `policy.${field}` });
  }
  const order = registry.names();
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  const names = [...chosen.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const units: HostSpecUnit[] = [];
  const skipped: string[] = [];
  for (const name of names) {
    const { raw, source, path } = chosen.get(name) as { raw: unknown; source: 'profile' | 'pool'; path: string };
    const unit = checkUnit(name, raw, path, registry);
    if (unit.when !== undefined && !labelsMatch(unit.when, input.labels)) {
      skipped.push(name);
      continue;
    }
    units.push({ name, source, known: unit.known, settings: unit.settings });
  }
  return { workflowId: input.workflowId, profile: input.profile, units, skipped };
}
