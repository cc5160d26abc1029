// The compiler: a profile version → the plan the `provision` workflow interprets. Every
// default is resolved here (activity, queue, timeout, RetryPolicy), so the plan in the
// workflow history says exactly what ran.
import { durationMs } from '../core/duration';
import { nonRetryableCodes } from '../core/errors';
import type { JsonObject, Plan, PlanRetry, PlanRoute, PlanStep } from '../core/plan';
import type { StepDocument } from '../core/schemas/profiles';
import { stepRegistry } from '../core/steps/builtin';
import { stepActivityName, type RetryClass, type StepRegistry } from '../core/steps/registry';
import { checkProfile, runsOn } from './check';
import { profileError } from './defineProfile';

/**
 * How long a task waits for a site agent before the step is re-routed to the next one: a
 * quarter of the step's timeout (so a re-route fits in it), between 1 s and 30 s.
 */
export const SITE_SCHEDULE_TO_START_CAP_MS = 30_000;
const siteScheduleToStart = (timeoutMs: number) => Math.min(SITE_SCHEDULE_TO_START_CAP_MS, Math.max(1000, Math.floor(timeoutMs / 4)));

/**
 * The heartbeat timeout of a step on an agent (site, ramdisk, node) whose kind names none. The
 * agent beats every half of it (agent/common/heartbeating.ts), and a step shorter than that
 * sends no beat; a task lost on its way to the agent (the agent's poll gave up as Temporal
 * handed it out, or Temporal's store timed out meanwhile) or an agent that died is noticed
 * within it, not after the step's whole timeout.
 */
export const AGENT_STEP_HEARTBEAT_MS = 30_000;
const agentRoutes: ReadonlySet<string> = new Set(['site', 'ramdisk', 'node']);

const ms = (text: string | undefined, fallback: number): number => (text === undefined ? fallback : (durationMs(text) ?? fallback));

/** The step's RetryPolicy: its retry class (a `once` step gets one attempt), the profile's retries or the default, and the one retry rule's codes. */
function retryOf(retryClass: RetryClass, retries: StepDocument['retries'], defaultRetries: number, timeoutMs: number): PlanRetry {
  const spec = typeof retries === 'number' ? { max: retries } : (retries ?? { max: defaultRetries });
  const initialIntervalMs = ms(spec.initialInterval, Math.min(1000, timeoutMs));
  return {
    maximumAttempts: retryClass === 'once' ? 1 : spec.max + 1,
    initialIntervalMs,
    backoffCoefficient: spec.backoffCoefficient ?? 2,
    maximumIntervalMs: Math.max(initialIntervalMs, ms(spec.maxInterval, 60_000)),
    nonRetryableErrorTypes: [...nonRetryableCodes],
  };
}

const routes: Record<ReturnType<typeof runsOn>, PlanRoute> = { control: 'control', workflow: 'workflow', site: 'site-agent', ramdisk: 'ramdisk', node: 'node' };

function compileStep(step: StepDocument, key: string, registry: StepRegistry, allowFallback: boolean): PlanStep {
  const definition = registry.get(step.use);
  if (!definition) throw new Error(`unchecked step ${step.use}`); // checkProfile ran first
  const queue = step.on ?? 'control';
  const runs = runsOn(definition, step);
  const timeoutMs = ms(step.timeout, ms(definition.defaultTimeout, 60_000));
  const compiled: PlanStep = {
    key,
    use: step.use,
    activity: stepActivityName(definition),
    queue,
    route: routes[runs],
    with: definition.with.parse(step.with ?? {}) as JsonObject,
    timeoutMs,
    retry: retryOf(definition.retry, step.retries, definition.defaultRetries, timeoutMs),
    onFailure: step.onFailure ?? 'fail',
  };
  if (queue === 'site') compiled.scheduleToStartMs = siteScheduleToStart(timeoutMs);
  if (queue === 'ramdisk' || queue === 'node') compiled.scheduleToStartMs = timeoutMs;
  const heartbeatMs = definition.heartbeat ? ms(definition.heartbeat, timeoutMs) : agentRoutes.has(runs) ? AGENT_STEP_HEARTBEAT_MS : undefined;
  if (heartbeatMs) compiled.heartbeatMs = Math.min(heartbeatMs, timeoutMs);
  if (step.await) compiled.await = step.await;
  if (step.when) compiled.when = step.when;
  if (allowFallback && 'fallback' in step && step.fallback) compiled.fallback = compileStep(step.fallback, `${key}.fallback`, registry, false);
  return compiled;
}

/** Compiles a profile document of `tenantId` (its owner; `builtin` for shipped ones). */
export function compileProfile(document: unknown, tenantId: string, registry: StepRegistry = stepRegistry): Plan {
  const { profile, problems } = checkProfile(document, registry);
  if (!profile) throw profileError(problems, 'INVALID_CONFIG');
  const list = (steps: StepDocument[], name: string) => steps.map((s, i) => compileStep(s, `${name}[${i}]`, registry, true));
  const plan: Plan = {
    profile: { tenantId, id: profile.id, version: profile.version, ref: `${profile.id}@${profile.version}` },
    target: profile.target,
    role: profile.role,
    steps: list(profile.steps, 'steps'),
    acceptance: list(profile.acceptance, 'acceptance'),
    cleanup: list(profile.cleanup, 'cleanup'),
  };
  if (profile.image) plan.image = { ...profile.image };
  if (profile.userData) {
    plan.userData = { ...profile.userData };
    // userdata.render renders the profile's userData: its kind, template and TTL travel in the step's input.
    const userData = plan.userData;
    plan.steps = plan.steps.map((s) => (s.use === 'userdata.render' ? { ...s, with: { ...userData, ...s.with } } : s));
  }
  return plan;
}
