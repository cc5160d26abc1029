// GPU diagnostics from a real `dcgmi diag` when it is installed: the report, undefined when
// there is no dcgmi, DRIVER_ERROR when it ran and failed. Agents fall back to what their
// machine reports (the emulator's answer) only when this is undefined.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { IronflowError } from '../../core/errors';

const run = promisify(execFile);

export interface DcgmReport {
  level: number;
  tests: Array<{ name: string; passed: boolean; detail?: string }>;
}

type DcgmiJson = { DCGM_GPU_DIAGNOSTIC?: { test_categories?: Array<{ tests?: Array<{ name: string; results?: Array<{ status: string; info?: string }> }> }> } };

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
  const tests = (parsed.DCGM_GPU_DIAGNOSTIC?.test_categories ?? []).flatMap((c) => c.tests ?? []).map((t) => ({
    name: t.name,
    passed: (t.results ?? []).every((r) => r.status === 'Pass' || r.status === 'Skip'),
    ...(t.results?.[0]?.info ? { detail: t.results[0].info } : {}),
  }));
  // An answer with no tests is not a pass: the JSON had another shape, or nothing ran.
  if (tests.length === 0) throw new IronflowError('DRIVER_ERROR', `dcgmi diag -r ${level} reported no test results; check that dcgmi's JSON has DCGM_GPU_DIAGNOSTIC.test_categories`, { reason: 'dcgmi-no-tests' });
  return { level, tests };
}
