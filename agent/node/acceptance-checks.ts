// The pool's acceptance checks (spec 004 "adopting"), run by the node agent on the machine's
// own OS: each is a named check with bounded params, answered with what was observed, or
// DRIVER_ERROR "acceptance check <name> failed: …" naming the check (what lastError shows).
// A name this agent does not know is UNSUPPORTED, naming the ones it does. GPUs are the
// machine's facts (what the node agent reads from the host), so `gpus` is the GPU check.
import { z } from 'zod';
import { IronflowError, parseWith } from '../../core/errors';
import type { JsonObject, StepInput } from '../../core/plan';
import type { NodeMachine } from './machine';

const GiB = 1024 ** 3;
const inputSchema = z
  .object({ name: z.string().min(1).max(64), params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}) })
  .strict();

type Params = Record<string, string | number | boolean>;
interface CheckResult {
  passed: boolean;
  observed: JsonObject;
  why?: string;
}
type Check = (machine: NodeMachine, params: Params) => CheckResult;

const atLeast = (params: Params, key: string, fallback: number): number => {
  const value = params[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new IronflowError('INVALID_INPUT', `acceptance check param ${key} must be a number ≥ 0, not ${JSON.stringify(value)}`, { path: `params.${key}` });
  return value;
};

export function acceptanceChecks(): Record<string, Check> {
  return {
    cpus(machine, params) {
      const min = atLeast(params, 'min', 1);
      return { passed: machine.cpus >= min, observed: { cpus: machine.cpus }, why: `${machine.cpus} CPUs, the pool wants at least ${min}` };
    },
    memory(machine, params) {
      const minGiB = atLeast(params, 'minGiB', 1);
      const gib = Math.floor((machine.memoryBytes / GiB) * 10) / 10;
      return {
        passed: machine.memoryBytes >= minGiB * GiB,
        observed: { memoryBytes: machine.memoryBytes },
        why: `${gib} GiB of memory, the pool wants at least ${minGiB} GiB`,
      };
    },
    gpus(machine, params) {
      const min = atLeast(params, 'min', 1);
      const model = typeof params.model === 'string' ? params.model : undefined;
      const matching = machine.gpus.filter((g) => !model || g.model.includes(model));
      return {
        passed: matching.length >= min,
        observed: { gpus: machine.gpus.length, matching: matching.length },
        why: `${matching.length} GPU(s)${model ? ` of model ${model}` : ''}, the pool wants at least ${min}`,
      };
    },
  };
}

/** acceptance.check: one check by name; its answer says what was observed. */
export async function runAcceptanceCheck(input: StepInput, machine: NodeMachine, checks = acceptanceChecks()): Promise<JsonObject> {
  const { name, params } = parseWith(inputSchema, input.with);
  const check = Object.hasOwn(checks, name) ? checks[name] : undefined;
  if (!check)
    throw new IronflowError('UNSUPPORTED', `acceptance check ${name} is not one this agent runs (${Object.keys(checks).join(', ')})`, {
      reason: 'acceptance-unknown',
      check: name,
    });
  const result = check(machine, params);
  if (!result.passed)
    throw new IronflowError('DRIVER_ERROR', `acceptance check ${name} failed: ${result.why ?? 'not passed'}`, {
      reason: 'acceptance-failed',
      check: name,
      observed: result.observed,
    });
  return { check: name, passed: true, observed: result.observed };
}
