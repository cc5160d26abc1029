// Workflow code, bundled once per process. IRONFLOW_WORKFLOW_BUNDLE names a prebuilt
// bundle (the test setup builds one for all test files).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/** Bundled with the workflows: each run's end reported to the worker's metrics sink. */
const workflowInterceptorModules = [fileURLToPath(new URL('./sandbox/workflow-metrics.ts', import.meta.url))];

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

export function buildWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath, workflowInterceptorModules, logger: new DefaultLogger('WARN') });
}

export async function workflowSource(): Promise<{ workflowBundle: { code: string } }> {
  const prebuilt = process.env.IRONFLOW_WORKFLOW_BUNDLE;
  if (prebuilt) return { workflowBundle: { code: readFileSync(prebuilt, 'utf8') } };
  bundle ??= buildWorkflowBundle();
  return { workflowBundle: { code: (await bundle).code } };
}
