// Where the CLI finds the API and its credential: IRONFLOW_API_URL / IRONFLOW_CREDENTIAL,
// else the dev stack's defaults (temporal-dev.yaml, .ironflow/root-credential); and the
// API's CA when it is not in the system's store: --ca-file or IRONFLOW_CA_FILE.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readCaFile } from '../core/ca-file';
import { loadConfig, type IronflowConfig } from '../core/config';
import { ApiClient } from './api-client';
import type { OutputFormat } from './output';

export interface CliContext {
  config: IronflowConfig;
  api: ApiClient;
  format: OutputFormat;
  /** Progress and notes go to stderr, so stdout stays the result. */
  note(line: string): void;
}

export function createCliContext(options: { format: OutputFormat; apiUrl?: string; credential?: string; caFile?: string }): CliContext {
  const config = loadConfig();
  const apiUrl = options.apiUrl ?? config.api.publicUrl;
  let credential = options.credential ?? process.env.IRONFLOW_CREDENTIAL;
  const file = path.join(config.dataDir, 'root-credential');
  if (!credential && existsSync(file)) credential = readFileSync(file, 'utf8').trim();
  const caFile = options.caFile ?? (process.env.IRONFLOW_CA_FILE || undefined);
  return {
    config,
    api: new ApiClient(apiUrl, credential, { caPems: caFile ? [readCaFile(caFile, options.caFile ? '--ca-file' : 'IRONFLOW_CA_FILE')] : undefined }),
    format: options.format,
    note: (line) => process.stderr.write(`${line}\n`),
  };
}
