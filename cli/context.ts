// Where the CLI finds the API and its credential: IRONFLOW_API_URL and the credential's
// source (cli/credential-source.ts), else the dev stack's defaults; and the
// API's CA when it is not in the system's store: --ca-file or IRONFLOW_CA_FILE.
import { readCaFile } from '../services/ca-file';
import { loadConfig, type IronflowConfig } from '../services/config';
import { ApiClient } from './api-client';
import { resolveCredential } from './credential-source';
import type { OutputFormat } from './output';

export interface CliContext {
  config: IronflowConfig;
  api: ApiClient;
  format: OutputFormat;
  /** Which setting the credential came from (named when the API refuses it). */
  credentialFrom?: string;
  /** Progress and notes go to stderr, so stdout stays the result. */
  note(line: string): void;
}

export function createCliContext(options: { format: OutputFormat; apiUrl?: string; caFile?: string }): CliContext {
  const config = loadConfig();
  const apiUrl = options.apiUrl ?? config.api.publicUrl;
  const credential = resolveCredential(process.env, config.dataDir);
  const caFile = options.caFile ?? (process.env.IRONFLOW_CA_FILE || undefined);
  return {
    config,
    api: new ApiClient(apiUrl, credential.bearer, { caPems: caFile ? [readCaFile(caFile, options.caFile ? '--ca-file' : 'IRONFLOW_CA_FILE')] : undefined }),
    format: options.format,
    credentialFrom: credential.from,
    note: (line) => process.stderr.write(`${line}\n`),
  };
}
