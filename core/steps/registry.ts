// The step registry, the one source of truth for a step: for each `use`, where it runs, the
// zod schemas of its input (`with`) and its answer (`output`), its retry class, and its
// default timeout and retries. The compiler, `profiles validate`, the agents' step maps
// (typed by StepsOf) and the lifecycle reading a result (outputSchemaOf) all read it.
import type { z } from 'zod';
import type { QueueKind } from '../agent-queues';

/**
 * Where a step runs: a worker's queue, or `workflow` for a step the provision interpreter
 * runs itself (it waits, relays and signals; no single activity is the step).
 */
export type StepQueue = QueueKind | 'workflow';
export type AgentQueue = Exclude<QueueKind, 'control'>;
export const agentQueues = ['site', 'ramdisk', 'node'] as const satisfies readonly AgentQueue[];

/**
 * `idempotent`: another attempt after a retryable code (core/errors.ts `retryable`) does no
 * harm. `once`: never retried, because an attempt repeats a side effect (a kexec, a reboot).
 */
export type RetryClass = 'idempotent' | 'once';

/** What a step takes and answers on one queue. */
export interface StepShape<W extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  with: W;
  output: O;
}

export interface StepDefinition<
  U extends string = string,
  Q extends StepQueue = StepQueue,
  C extends AgentQueue = AgentQueue,
  W extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
> extends StepShape<W, O> {
  use: U;
  summary: string;
  /** The Temporal activity name (what the worker on that queue registers). Default: `use`. */
  activity?: string;
  /** Where a profile may run it; the first is the default. Empty: a command kind only (see commandOn). */
  queues: readonly Q[];
  /**
   * Agents' queues the control plane sends this kind to itself, never a profile: a control
   * step's relay (deploy.deploy → deploy.image) or a command kind of the agent's role.
   */
  commandOn?: readonly C[];
  /** Where the kind takes other input or answers otherwise than `with`/`output` (the site agent's inventory.refresh reports its own host). */
  shapes?: Partial<Record<AgentQueue, StepShape>>;
  /** The machine's agent signs the result (services/attestations); the control plane counts it only verified. */
  attested?: boolean;
  retry: RetryClass;
  defaultTimeout: string;
  /** Retries after the first attempt (a `once` step has none). */
  defaultRetries: number;
  /** Long steps heartbeat their progress; a silent attempt is retried after this. */
  heartbeat?: string;
}

/** Keeps a definition's literal `use`, queues and schemas, so StepsOf can name the steps of a queue and OutputOf their answers. */
export function defineStep<
  const U extends string,
  W extends z.ZodType,
  O extends z.ZodType,
  const Q extends StepQueue = never,
  const C extends AgentQueue = never,
>(definition: StepDefinition<U, Q, C, W, O>): StepDefinition<U, Q, C, W, O> {
  return definition;
}

/** The `use` of every step among D served on queue Q (by a profile step or as a command). */
export type ServedOn<D, Q extends StepQueue> =
  D extends StepDefinition<infer U, infer Qs, infer Cs, z.ZodType, z.ZodType> ? (Q extends Qs | Cs ? U : never) : never;

/** Every queue a definition is served on. */
export const servedQueues = (definition: StepDefinition): StepQueue[] => [...new Set<StepQueue>([...definition.queues, ...(definition.commandOn ?? [])])];

/** What the step takes and answers on `queue`. */
export function shapeOf(definition: StepDefinition, queue: StepQueue): StepShape {
  return (queue === 'control' || queue === 'workflow' ? undefined : definition.shapes?.[queue]) ?? definition;
}

export interface StepRegistry {
  register<U extends string, Q extends StepQueue, C extends AgentQueue, W extends z.ZodType, O extends z.ZodType>(
    definition: StepDefinition<U, Q, C, W, O>,
  ): StepRegistry;
  get(use: string): StepDefinition | undefined;
  list(): StepDefinition[];
  /** The uses served on `queue`, in registration order. */
  servedOn(queue: StepQueue): string[];
  /** A copy to extend without changing this one (tests, modules with private steps). */
  extend(): StepRegistry;
}

const usePattern = /^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$/;

export function createStepRegistry(initial: Iterable<StepDefinition> = []): StepRegistry {
  const steps = new Map<string, StepDefinition>();
  const registry: StepRegistry = {
    register(definition) {
      if (!usePattern.test(definition.use)) throw new Error(`step name ${definition.use} is not dotted lower camel case (e.g. power.setPower)`);
      if (steps.has(definition.use)) throw new Error(`step ${definition.use} is registered twice`);
      if (definition.queues.length === 0 && (definition.commandOn ?? []).length === 0) throw new Error(`step ${definition.use} runs nowhere: give it queues`);
      if (definition.retry === 'once' && definition.defaultRetries !== 0)
        throw new Error(`step ${definition.use} is never retried (retry: once) but has defaultRetries`);
      steps.set(definition.use, definition as unknown as StepDefinition);
      return registry;
    },
    get: (use) => steps.get(use),
    list: () => [...steps.values()],
    servedOn: (queue) => [...steps.values()].filter((d) => servedQueues(d).includes(queue)).map((d) => d.use),
    extend: () => createStepRegistry(steps.values()),
  };
  for (const definition of initial) registry.register(definition);
  return registry;
}

export const stepActivityName = (definition: StepDefinition): string => definition.activity ?? definition.use;
