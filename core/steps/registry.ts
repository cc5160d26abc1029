// The step registry: for each `use`, the activity that runs it, where it may run, the zod
// schema of its `with`, and its default timeout and retries. Modules extend it with
// `register`; the compiler and `profiles validate` read it.
import type { z } from 'zod';
import type { QueueKind } from '../agent-queues';

export interface StepDefinition<W extends z.ZodType = z.ZodType> {
  use: string;
  summary: string;
  /** The Temporal activity name (what the worker on that queue registers). Default: `use`. */
  activity?: string;
  /** Where it may run; the first is the default when the profile gives no `on`. */
  queues: readonly [QueueKind, ...QueueKind[]];
  /** A control step that sends work through the machine's site agent. */
  relaysViaSite?: boolean;
  with: W;
  defaultTimeout: string;
  /** Retries after the first attempt. */
  defaultRetries: number;
  /** Long steps heartbeat their progress; a silent attempt is retried after this. */
  heartbeat?: string;
}

export interface StepRegistry {
  register<W extends z.ZodType>(definition: StepDefinition<W>): StepRegistry;
  get(use: string): StepDefinition | undefined;
  list(): StepDefinition[];
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
      steps.set(definition.use, definition as unknown as StepDefinition);
      return registry;
    },
    get: (use) => steps.get(use),
    list: () => [...steps.values()],
    extend: () => createStepRegistry(steps.values()),
  };
  for (const definition of initial) registry.register(definition);
  return registry;
}

export const stepActivityName = (definition: StepDefinition): string => definition.activity ?? definition.use;
