// runDcgmi against stand-in `dcgmi` executables (the GPU tool is hardware-side): a report
// with no tests, or no JSON, is DRIVER_ERROR rather than a pass; a failed test is reported;
// the report says it came from dcgmi, with the version `dcgmi --version` printed.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { runDcgmi } from '../../agent/common/dcgm';
import { IronflowError } from '../../core/errors';

const dir = mkdtempSync(path.join(inject('runDir'), 'dcgmi-'));

function dcgmi(name: string, stdout: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\nif [ "$1" = --version ]; then echo 'dcgmi  version: 3.3.6'; exit 0; fi\ncat <<'JSON'\n${stdout}\nJSON\n`);
  chmodSync(file, 0o755);
  return file;
}

async function failure(promise: Promise<unknown>): Promise<IronflowError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IronflowError);
  return error as IronflowError;
}

describe('runDcgmi', () => {
  it('is undefined when dcgmi is not installed', async () => {
    expect(await runDcgmi(1, path.join(dir, 'missing'))).toBeUndefined();
  });

  it('reads pass and fail per test', async () => {
    const json = JSON.stringify({
      DCGM_GPU_DIAGNOSTIC: {
        test_categories: [
          {
            tests: [
              { name: 'Memory', results: [{ status: 'Pass' }] },
              { name: 'PCIe', results: [{ status: 'Fail', info: 'link down' }] },
            ],
          },
        ],
      },
    });
    expect(await runDcgmi(2, dcgmi('mixed', json))).toEqual({
      level: 2,
      source: 'dcgmi',
      dcgmiVersion: '3.3.6',
      tests: [
        { name: 'Memory', passed: true },
        { name: 'PCIe', passed: false, detail: 'link down' },
      ],
    });
  });

  it('refuses a report with no tests instead of passing it', async () => {
    const error = await failure(runDcgmi(1, dcgmi('empty', '{}')));
    expect(error.code).toBe('DRIVER_ERROR');
    expect(error.message).toMatch(/no test results/);
  });

  it('refuses output that is not JSON', async () => {
    const error = await failure(runDcgmi(1, dcgmi('text', 'Error: unknown option -j')));
    expect(error.code).toBe('DRIVER_ERROR');
    expect(error.message).toMatch(/no JSON/);
  });
});
