// Workflow code, bundled once per process, and kept between starts in the data dir
// (worker/workflow-bundle-cache.ts). IRONFLOW_WORKFLOW_BUNDLE names a prebuilt bundle (the test
// setup builds one for all test files).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { cachedWorkflowBundle, projectDigest } from './workflow-bundle-cache';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/** Bundled with the workflows: each run's end reported to the worker's metrics sink. */
const workflowInterceptorModules = [fileURLToPath(new URL('./sandbox/workflow-metrics.ts', import.meta.url))];

let bundle: Promise<{ code: string }> | undefined;

export function buildWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath, workflowInterceptorModules, logger: new DefaultLogger('WARN') });
}

/** What else a bundle depends on besides its modules' content: what it is asked to hold, and the tools that build and run it. */
function bundleKey(): string {
  const require = createRequire(import.meta.url);
  const versions = ['@temporalio/worker', 'webpack', '@swc/core', 'swc-loader'].map(
    (name) => `${name}@${(require(`${name}/package.json`) as { version: string }).version}`,
  );
  const project = projectDigest(fileURLToPath(new URL('..', import.meta.url)));
  return JSON.stringify({ workflowsPath, workflowInterceptorModules, node: process.version, versions, project });
}

/** The worker's workflow code: the prebuilt bundle when named, else the one kept under `dataDir` or built afresh. */
export async function workflowSource(dataDir: string): Promise<{ workflowBundle: { code: string } }> {
  const prebuilt = process.env.IRONFLOW_WORKFLOW_BUNDLE;
  if (prebuilt) return { workflowBundle: { code: readFileSync(prebuilt, 'utf8') } };
  bundle ??= cachedWorkflowBundle(path.join(dataDir, 'cache'), bundleKey(), buildWorkflowBundle);
  return { workflowBundle: { code: (await bundle).code } };
}
