// Runs the real `ironflow` command (bin/ironflow.mjs) as a subprocess against a test server.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../services/config';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: { apiUrl: string; credential?: string; cwd?: string } & Record<string, string | undefined>): Promise<CliResult> {
  const { apiUrl, credential, cwd, ...extra } = env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(repoRoot, 'bin', 'ironflow.mjs'), ...args],
      { cwd: cwd ?? repoRoot, env: { ...process.env, ...extra, IRONFLOW_API_URL: apiUrl, IRONFLOW_CREDENTIAL: credential ?? '' }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}
