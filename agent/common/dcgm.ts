// GPU diagnostics for diag.dcgm, on the ramdisk and on the node agent, with an honest source:
// the machine emulator's own answer on an emulated machine (`emulated`: the control plane
// counts it only in a pool that allows emulated machines), nothing to diagnose on a machine
// without GPUs (`no-gpus`), else a real `dcgmi diag` with the tool's version (`dcgmi`), or
// UNSUPPORTED when it is not installed. The result is attested (agent/common/attest.ts)
// and a failed test is DRIVER_ERROR.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { z } from 'zod';
import { IronflowError, parseWith } from '../../core/errors';
import type { StepInput } from '../../core/plan';
import type { Signer } from './control-plane-client';
import { attestStepResult } from './attest';

const run = promisify(execFile);

interface DcgmTest {
  name: string;
  passed: boolean;
  detail?: string;
}

interface DcgmReport {
  level: number;
  tests: DcgmTest[];
  source: 'dcgmi' | 'emulated' | 'no-gpus';
  /** `dcgmi --version`'s version (source dcgmi; null when it printed none). */
  dcgmiVersion?: string | null;
}

/** The machine emulator's DCGM answer: it says it is one. */
export interface EmulatedDcgmReport {
  level: number;
  tests: DcgmTest[];
  source: 'emulated';
}
export type EmulatedDcgm = (level: number) => Promise<EmulatedDcgmReport>;

/** What diag.dcgm needs of its machine: its GPUs, and the emulator's door (emulated machines only). */
interface GpuMachine {
  gpus: readonly unknown[];
  dcgm?: EmulatedDcgm;
}

type DcgmiJson = { DCGM_GPU_DIAGNOSTIC?: { test_categories?: Array<{ tests?: Array<{ name: string; results?: Array<{ status: string; info?: string }> }> }> } };

async function dcgmiVersion(binary: string): Promise<string | null> {
  try {
    const { stdout } = await run(binary, ['--version'], { timeout: 30_000, maxBuffer: 64 * 1024 });
    return /version\s*:?\s*([0-9][0-9A-Za-z.+~-]{0,63})/i.exec(stdout)?.[1] ?? null;
  } catch {
    return null;
  }
}

/** A real `dcgmi diag -r <level> -j`: the report, undefined when dcgmi is not installed, DRIVER_ERROR when it ran and failed. */
export async function runDcgmi(level: number, binary = 'dcgmi'): Promise<DcgmReport | undefined> {
  let stdout: string;
  try {
    ({ stdout } = await run(binary, ['diag', '-r', String(level), '-j'], { timeout: 3_600_000, maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new IronflowError('DRIVER_ERROR', `dcgmi diag failed: ${(error as Error).message}`, { reason: 'dcgmi' });
  }
  let parsed: DcgmiJson;
  try {
    parsed = JSON.parse(stdout) as DcgmiJson;
  } catch {
    throw new IronflowError('DRIVER_ERROR', `dcgmi diag -r ${level} printed no JSON; check the DCGM version supports -j`, { reason: 'dcgmi-output' });
  }
  const tests = (parsed.DCGM_GPU_DIAGNOSTIC?.test_categories ?? [])
    .flatMap((c) => c.tests ?? [])
    .map((t) => ({
      name: t.name,
      passed: (t.results ?? []).every((r) => r.status === 'Pass' || r.status === 'Skip'),
      ...(t.results?.[0]?.info ? { detail: t.results[0].info } : {}),
    }));
  // An answer with no tests is not a pass: the JSON had another shape, or nothing ran.
  if (tests.length === 0)
    throw new IronflowError(
      'DRIVER_ERROR',
      `dcgmi diag -r ${level} reported no test results; check that dcgmi's JSON has DCGM_GPU_DIAGNOSTIC.test_categories`,
      { reason: 'dcgmi-no-tests' },
    );
  return { level, tests, source: 'dcgmi', dcgmiVersion: await dcgmiVersion(binary) };
}

/** The report for this machine, from the source that actually produced it. */
async function diagnoseGpus(level: number, machine: GpuMachine, dcgmiBinary = 'dcgmi'): Promise<DcgmReport> {
  if (machine.dcgm) {
    const emulated = await machine.dcgm(level);
    return { level, tests: emulated.tests, source: 'emulated' };
  }
  if (machine.gpus.length === 0) return { level, tests: [], source: 'no-gpus' };
  const real = await runDcgmi(level, dcgmiBinary);
  if (!real)
    throw new IronflowError('UNSUPPORTED', `this machine has ${machine.gpus.length} GPU(s) and no dcgmi; install datacenter-gpu-manager`, {
      reason: 'no-dcgmi',
    });
  return real;
}

const dcgmWith = z.object({ level: z.number().int().min(1).max(4).default(1) }).strict();

/** diag.dcgm's answer: the attested report, or DRIVER_ERROR naming the failed tests. */
export async function dcgmStepResult(signer: Signer, nodeId: string, input: StepInput, machine: GpuMachine, dcgmiBinary?: string) {
  const { level } = parseWith(dcgmWith, input.with);
  const report = await diagnoseGpus(level, machine, dcgmiBinary);
  const failed = report.tests.filter((t) => !t.passed);
  if (failed.length > 0)
    throw new IronflowError('DRIVER_ERROR', `DCGM level ${level}: ${failed.map((t) => t.name).join(', ')} failed`, {
      reason: 'dcgm-failed',
      failed: failed.map((t) => t.name),
    });
  const result = {
    nodeId,
    workflowId: input.workflowId,
    level,
    tests: report.tests.map((t) => ({ name: t.name, passed: t.passed, ...(t.detail ? { detail: t.detail } : {}) })),
    source: report.source,
    ...(report.source === 'dcgmi' ? { dcgmiVersion: report.dcgmiVersion ?? null } : {}),
    passed: true,
  };
  return attestStepResult(signer, nodeId, input, result);
}
