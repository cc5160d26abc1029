// The pool's acceptance checks (spec 004 "adopting"), run by the node agent on the machine's
// own OS: each is a named check with bounded params, answered with what was observed, or
// DRIVER_ERROR "acceptance check <name> failed: …" naming the check (what lastError shows).
// A name this agent does not know is UNSUPPORTED, naming the ones it does.
import { execFile } from 'node:child_process';
import { z } from 'zod';
import { IronflowError, parseWith } from '../../core/errors';
import type { JsonObject, StepInput } from '../../core/plan';
import type { NodeMachine } from './machine';

const GiB = 1024 ** 3;
const inputSchema = z.object({ name: z.string().min(1).max(64), params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}) }).strict();

type Params = Record<string, string | number | boolean>;
interface CheckResult {
  passed: boolean;
  observed: JsonObject;
  why?: string;
}
type Check = (machine: NodeMachine, params: Params) => Promise<CheckResult>;

const count = (params: Params, key: string, fallback: number): number => {
  const value = params[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new IronflowError('INVALID_INPUT', `acceptance check param ${key} must be a number ≥ 0, not ${JSON.stringify(value)}`, { path: `params.${key}` });
  return value;
};

/** `nvidia-smi -L`: one line per GPU the driver sees (bounded output and time). */
function nvidiaSmiGpus(binary: string): Promise<string[] | undefined> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-L'], { timeout: 30_000, maxBuffer: 256 * 1024 }, (error, stdout) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') return resolve(undefined);
      if (error) return reject(new IronflowError('DRIVER_ERROR', `acceptance check nvidia-smi failed: ${binary} -L: ${error.message.slice(0, 256)}`, { reason: 'acceptance-failed', check: 'nvidia-smi' }));
      resolve(stdout.split('\n').filter((line) => /^GPU \d+:/.test(line)));
    });
  });
}

export function acceptanceChecks(options: { nvidiaSmiBinary?: string } = {}): Record<string, Check> {
  return {
    async cpus(machine, params) {
      const min = count(params, 'min', 1);
      return { passed: machine.cpus >= min, observed: { cpus: machine.cpus }, why: `${machine.cpus} CPUs, the pool wants at least ${min}` };
    },
    async memory(machine, params) {
      const minGiB = count(params, 'minGiB', 1);
      const gib = Math.floor((machine.memoryBytes / GiB) * 10) / 10;
      return { passed: machine.memoryBytes >= minGiB * GiB, observed: { memoryBytes: machine.memoryBytes }, why: `${gib} GiB of memory, the pool wants at least ${minGiB} GiB` };
    },
    async gpus(machine, params) {
      const min = count(params, 'min', 1);
      const model = typeof params.model === 'string' ? params.model : undefined;
      const matching = machine.gpus.filter((g) => !model || g.model.includes(model));
      return { passed: matching.length >= min, observed: { gpus: machine.gpus.length, matching: matching.length }, why: `${matching.length} GPU(s)${model ? ` of model ${model}` : ''}, the pool wants at least ${min}` };
    },
    async 'nvidia-smi'(_machine, params): Promise<CheckResult> {
      const min = count(params, 'min', 1);
      const gpus = await nvidiaSmiGpus(options.nvidiaSmiBinary ?? 'nvidia-smi');
      if (!gpus) return { passed: false, observed: { installed: false }, why: 'nvidia-smi is not installed on this host (install the NVIDIA driver utilities, e.g. apt-get install nvidia-utils-550)' };
      return { passed: gpus.length >= min, observed: { gpus: gpus.length }, why: `nvidia-smi lists ${gpus.length} GPU(s), the pool wants at least ${min}` };
    },
  };
}

/** acceptance.check: one check by name; its answer says what was observed. */
export async function runAcceptanceCheck(input: StepInput, machine: NodeMachine, checks = acceptanceChecks()): Promise<JsonObject> {
  const { name, params } = parseWith(inputSchema, input.with);
  const check = Object.hasOwn(checks, name) ? checks[name] : undefined;
  if (!check) throw new IronflowError('UNSUPPORTED', `acceptance check ${name} is not one this agent runs (${Object.keys(checks).join(', ')})`, { reason: 'acceptance-unknown', check: name });
  const result = await check(machine, params);
  if (!result.passed) throw new IronflowError('DRIVER_ERROR', `acceptance check ${name} failed: ${result.why ?? 'not passed'}`, { reason: 'acceptance-failed', check: name, observed: result.observed });
  return { check: name, passed: true, observed: result.observed };
}
