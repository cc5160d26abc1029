// A control plane of one's own for a test file: its own data dir, database (a copy of the
// migrated template), task queue and API port, against the run's Temporal dev server.
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { ApiClient } from '../../cli/api-client';
import { loadConfig, type IronflowConfig } from '../../services/config';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from '../../stack/control-plane';

export interface TestControlPlane {
  cp: ControlPlane;
  config: IronflowConfig;
  /** A client holding the root credential. */
  root: ApiClient;
  /** A client with no credential. */
  anonymous: ApiClient;
  close(): Promise<void>;
}

async function copyTemplateDatabase(dataDir: string): Promise<string> {
  const template = inject('templateDatabase');
  if (template.startsWith('file:')) {
    const file = path.join(dataDir, 'ironflow.db');
    copyFileSync(template.slice('file:'.length), file);
    return `file:${file}`;
  }
  const name = `ironflow_t${randomBytes(6).toString('hex')}`;
  const url = new URL(template);
  const admin = new pg.Client({ connectionString: template.replace(/\/ironflow_template$/, '/postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ironflow_template`);
  await admin.end();
  url.pathname = `/${name}`;
  return url.toString();
}

/** The settings a test file's processes share (a second control plane on the same data, say). */
export async function testConfig(overrides: Record<string, string> = {}): Promise<IronflowConfig> {
  const dataDir = mkdtempSync(path.join(inject('runDir'), 'cp-'));
  process.env.IRONFLOW_WORKFLOW_BUNDLE = inject('workflowBundle');
  return loadConfig({
    ...process.env,
    IRONFLOW_DATA_DIR: dataDir,
    IRONFLOW_TEMPORAL_ADDRESS: inject('temporalAddress'),
    IRONFLOW_API_PORT: '0',
    IRONFLOW_GATEWAY_PORT: '0',
    IRONFLOW_CONTROL_QUEUE: `ironflow.control.${randomBytes(4).toString('hex')}`,
    DATABASE_URL: await copyTemplateDatabase(dataDir),
    ...overrides,
  });
}

export async function startTestControlPlane(options: ControlPlaneOptions & { config?: IronflowConfig } = {}): Promise<TestControlPlane> {
  const config = options.config ?? (await testConfig());
  const cp = await startControlPlane(config, { migrate: false, ...options });
  // An API on TLS (api.tls): the clients trust the chain it serves (its certificate file holds the CA).
  const trust = config.api.tls ? { caPems: [readFileSync(config.api.tls.certFile, 'utf8')] } : {};
  return {
    cp,
    config,
    root: new ApiClient(cp.url, cp.rootCredential.bearer, trust),
    anonymous: new ApiClient(cp.url, undefined, trust),
    close: () => cp.close(),
  };
}
