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

interface RunResources {
  temporalAddress: string;
  workflowBundle: string;
  templateDatabase: string;
  runDir: string;
  stop: () => Promise<void>;
}

/**
 * Made by the first project's setup, shared by the others. Vitest evaluates this file afresh for
 * each project, in one process: the share lives on globalThis, not in a module variable.
 */
const SHARED = Symbol.for('ironflow.test.runResources');
interface Shared {
  run: Promise<RunResources>;
  users: number;
}
const registry = globalThis as { [SHARED]?: Shared };

async function startRunResources(): Promise<RunResources> {
  const runDir = mkdtempSync(path.join(tmpdir(), 'ironflow-test-'));
  const [started, bundle] = await Promise.all([startTestTemporalServer(runDir), buildWorkflowBundle()]);
  const server: TemporalServer = started.server;
  const workflowBundle = path.join(runDir, 'workflow-bundle.js');
  writeFileSync(workflowBundle, bundle.code);

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
  return {
    temporalAddress: started.address,
    workflowBundle,
    templateDatabase,
    runDir,
    stop: async () => {
      await server.stop();
      if (!process.env.IRONFLOW_KEEP_TEST_DIR) rmSync(runDir, { recursive: true, force: true });
    },
  };
}

/**
 * Vitest calls this once per project, in one process. The first call starts the run's server,
 * bundle and template database, and every project is given the same ones; the last teardown
 * stops them. Every scratch file a test makes goes under `runDir` (`inject('runDir')`), so a
 * run leaves nothing in /tmp.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (registry[SHARED] ??= { run: startRunResources(), users: 0 });
  shared.users += 1;
  const run = await shared.run;
  project.provide('temporalAddress', run.temporalAddress);
  project.provide('workflowBundle', run.workflowBundle);
  project.provide('templateDatabase', run.templateDatabase);
  project.provide('runDir', run.runDir);
  return async () => {
    shared.users -= 1;
    if (shared.users === 0) {
      delete registry[SHARED];
      await run.stop();
    }
  };
}
