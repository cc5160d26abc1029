// Once per test run: a real Temporal dev server on free ports, the workflow bundle, and a
// migrated template database (SQLite file, or a PostgreSQL template database when
// IRONFLOW_TEST_DATABASE_URL is set) that each test file copies.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateDatabase } from '../stack/migrate';
import type { TemporalServer } from '../stack/temporal-server';
import { buildWorkflowBundle } from '../worker/workflow-bundle';
import { startTestTemporalServer } from './helpers/temporal-server';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    workflowBundle: string;
    templateDatabase: string;
    runDir: string;
  }
}

/**
 * Runs once per project (vitest calls it for each, in one process), so each project's server
 * and directory are its own and its teardown, returned, removes exactly those. Every scratch
 * file a test makes goes under `runDir` (`inject('runDir')`), so a run leaves nothing in /tmp.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = mkdtempSync(path.join(tmpdir(), 'ironflow-test-'));
  const [started, bundle] = await Promise.all([startTestTemporalServer(runDir), buildWorkflowBundle()]);
  const server: TemporalServer = started.server;
  const address = started.address;
  const bundleFile = path.join(runDir, 'workflow-bundle.js');
  writeFileSync(bundleFile, bundle.code);

  let templateDatabase: string;
  const pgUrl = process.env.IRONFLOW_TEST_DATABASE_URL;
  if (pgUrl) {
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query('DROP DATABASE IF EXISTS ironflow_template WITH (FORCE)');
    await admin.query('CREATE DATABASE ironflow_template');
    await admin.end();
    const url = new URL(pgUrl);
    url.pathname = '/ironflow_template';
    templateDatabase = url.toString();
  } else {
    templateDatabase = `file:${path.join(runDir, 'template.db')}`;
  }
  await migrateDatabase({ databaseUrl: templateDatabase, dataDir: runDir });

  project.provide('temporalAddress', address);
  project.provide('workflowBundle', bundleFile);
  project.provide('templateDatabase', templateDatabase);
  project.provide('runDir', runDir);
  return async () => {
    await server.stop();
    if (!process.env.IRONFLOW_KEEP_TEST_DIR) rmSync(runDir, { recursive: true, force: true });
  };
}
