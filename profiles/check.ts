// Every problem of a profile document, each with its path, in document order. `validate`
// reports them all; defineProfile and the API refuse with the first.
import type { z } from 'zod';
import { durationMs, MAX_STEP_MS } from '../core/duration';
import { formatPath, isIronflowError } from '../core/errors';
import { checkUnit } from '../core/host-config/host-spec';
import { parseLabelExpr } from '../core/label-expr';
import { profileDocumentSchema, stepSchema, targetOnlyFields, type Problem, type ProfileDocument, type StepDocument } from '../core/schemas/profiles';
import type { StepDefinition, StepQueue, StepRegistry } from '../core/steps/registry';
import { secretInputProblems } from './secret-inputs';

export interface ProfileCheck {
  /** The parsed document (defaults applied) when there is no problem. */
  profile?: ProfileDocument;
  problems: Problem[];
}

/** Values JSON cannot hold (undefined, functions, NaN, dates, class instances, cycles). */
function nonJsonProblems(value: unknown): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<object>();
  const walk = (v: unknown, path: string): void => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) problems.push({ path, message: `${v} is not a JSON number` });
      return;
    }
    if (typeof v !== 'object') {
      problems.push({ path, message: `a ${typeof v} is not a JSON value` });
      return;
    }
    if (seen.has(v)) {
      problems.push({ path, message: 'a cycle is not a JSON value' });
      return;
    }
    seen.add(v);
    if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) {
      problems.push({ path, message: `a ${v.constructor?.name ?? 'non-plain'} object is not a JSON value` });
    } else for (const [key, inner] of Object.entries(v)) walk(inner, path ? `${path}.${key}` : key);
    seen.delete(v);
  };
  walk(value, '');
  return problems;
}

function zodProblems(error: z.ZodError, prefix = ''): Problem[] {
  const join = (p: string) => (prefix && p ? (p.startsWith('[') ? `${prefix}${p}` : `${prefix}.${p}`) : prefix || p);
  return error.issues.flatMap((issue) => {
    const at = formatPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: join(at ? `${at}.${key}` : key), message: `unknown field "${key}"` }));
    }
    return [{ path: join(at), message: issue.message }];
  });
}

/** Document order of every path in the input, so "the first problem" is the first in the file. */
function documentOrder(value: unknown): Map<string, number> {
  const order = new Map<string, number>();
  const walk = (v: unknown, path: string): void => {
    order.set(path, order.size);
    if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (v && typeof v === 'object') for (const [key, inner] of Object.entries(v)) walk(inner, path ? `${path}.${key}` : key);
  };
  walk(value, '');
  return order;
}

function ordinal(order: Map<string, number>, path: string): number {
  let p = path;
  for (;;) {
    const found = order.get(p);
    if (found !== undefined) return found + (p === path ? 0 : 0.5);
    const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
    if (cut <= 0) return order.get('') ?? 0;
    p = p.slice(0, cut);
  }
}

/**
 * Where a profile step runs: its `on` (control when absent); a step the provision workflow
 * runs itself (queue `workflow`) takes no `on` (or `control`: the workflow runs there).
 */
export function runsOn(definition: StepDefinition, step: Pick<StepDocument, 'on'>): StepQueue {
  const on = step.on ?? 'control';
  return on === 'control' && definition.queues.includes('workflow') ? 'workflow' : on;
}

const isProfileStep = (definition: StepDefinition) => definition.queues.length > 0;

function stepProblems(step: StepDocument, path: string, registry: StepRegistry): Problem[] {
  const problems: Problem[] = [];
  const definition = registry.get(step.use);
  if (!definition || !isProfileStep(definition)) {
    const near = registry
      .list()
      .filter(isProfileStep)
      .map((d) => d.use)
      .filter((u) => u.split('.')[0] === step.use.split('.')[0]);
    const what = definition
      ? `${step.use} is not a profile step (the control plane sends it to the ${definition.commandOn?.join(' or ')} agent itself)`
      : `unknown step ${step.use}`;
    problems.push({ path: `${path}.use`, message: `${what}${near.length ? `; this family has ${near.join(', ')}` : ''}` });
  } else {
    const runs = runsOn(definition, step);
    if (!definition.queues.includes(runs)) {
      const first = definition.queues[0];
      const fix = first === 'workflow' ? 'remove on (the provision workflow runs it)' : `set on: '${first}'`;
      problems.push({ path: `${path}.on`, message: `${step.use} runs on ${definition.queues.join(' or ')}, not ${step.on ?? 'control'}: ${fix}` });
    }
    if (definition.retry === 'once' && step.retries !== undefined && (typeof step.retries === 'number' ? step.retries : step.retries.max) > 0) {
      problems.push({ path: `${path}.retries`, message: `${step.use} is never retried (another attempt would repeat its side effect): remove retries` });
    }
    const parsed = definition.with.safeParse(step.with ?? {});
    if (!parsed.success) problems.push(...zodProblems(parsed.error, `${path}.with`));
  }
  if (step.timeout !== undefined && (durationMs(step.timeout) ?? 0) > MAX_STEP_MS) {
    problems.push({ path: `${path}.timeout`, message: 'a step may run at most 24h' });
  }
  if (step.when !== undefined) {
    try {
      parseLabelExpr(step.when);
    } catch (err) {
      problems.push({ path: `${path}.when`, message: `not a label expression: ${(err as Error).message}` });
    }
  }
  if (step.with) problems.push(...secretInputProblems(step.with, `${path}.with`));
  return problems;
}

const isDeploy = (use: unknown) => typeof use === 'string' && use.startsWith('deploy.');

export function checkProfile(document: unknown, registry: StepRegistry): ProfileCheck {
  const problems: Problem[] = [...nonJsonProblems(document)];
  const parsed = profileDocumentSchema.safeParse(document);
  if (!parsed.success) problems.push(...zodProblems(parsed.error));
  const raw = (document && typeof document === 'object' ? document : {}) as Record<string, unknown>;

  // Fields of the other target.
  for (const [target, fields] of Object.entries(targetOnlyFields)) {
    if (raw.target === target || typeof raw.target !== 'string') continue;
    for (const field of fields)
      if (field in raw) problems.push({ path: field, message: `${field} belongs to target ${target}; this profile's target is ${raw.target}` });
  }

  // Each step that is well formed on its own, against the registry.
  const stepIds = new Map<string, string>();
  for (const list of ['steps', 'acceptance', 'cleanup'] as const) {
    const items = raw[list];
    if (!Array.isArray(items)) continue;
    items.forEach((item, i) => {
      const step = stepSchema.safeParse(item);
      if (!step.success) return;
      const path = `${list}[${i}]`;
      problems.push(...stepProblems(step.data, path, registry));
      if (step.data.fallback) problems.push(...stepProblems(step.data.fallback, `${path}.fallback`, registry));
      if (step.data.id) {
        const first = stepIds.get(step.data.id);
        if (first) problems.push({ path: `${path}.id`, message: `step id ${step.data.id} is already used by ${first}` });
        else stepIds.set(step.data.id, path);
      }
    });
  }

  // A deployed OS joins with the token userdata.render mints: render before any deploy.
  if (raw.userData !== undefined && Array.isArray(raw.steps)) {
    const uses = raw.steps.map((s) => (s && typeof s === 'object' ? (s as Record<string, unknown>).use : undefined));
    const deployAt = uses.findIndex(isDeploy);
    const renderAt = uses.indexOf('userdata.render');
    if (deployAt >= 0 && (renderAt < 0 || renderAt > deployAt)) {
      problems.push({
        path: `steps[${deployAt}].use`,
        message: `this profile has userData, so a userdata.render step must run before ${String(uses[deployAt])}`,
      });
    }
  }

  // Host config units: registered ones' settings and every unit's `when` (core/host-config).
  if (raw.hostConfig && typeof raw.hostConfig === 'object' && !Array.isArray(raw.hostConfig)) {
    for (const [name, unit] of Object.entries(raw.hostConfig as Record<string, unknown>)) {
      try {
        checkUnit(name, unit, `hostConfig.${name}`);
      } catch (error) {
        if (!isIronflowError(error)) throw error;
        const path = String(error.details.path ?? `hostConfig.${name}`);
        problems.push({ path, message: error.message.startsWith(`${path}: `) ? error.message.slice(path.length + 2) : error.message });
      }
    }
  }

  const order = documentOrder(document);
  const sorted = problems
    .map((p, i) => ({ p, i, at: ordinal(order, p.path) }))
    .sort((a, b) => a.at - b.at || a.i - b.i)
    .map(({ p }) => p);
  const unique = sorted.filter((p, i) => sorted.findIndex((q) => q.path === p.path && q.message === p.message) === i);
  return unique.length === 0 && parsed.success ? { profile: parsed.data, problems: [] } : { problems: unique };
}
