// The worker side of worker/sandbox/workflow-metrics.ts: a run's end, timed from its start
// (this run's, so a continued-as-new lifecycle counts each run), into
// ironflow_workflow_duration_seconds by workflow type, provision state and outcome.
import type { InjectedSinks } from '@temporalio/worker';
import { workflowSeconds } from '../services/metrics/registry';
import type { WorkflowMetricsSinks } from './sandbox/workflow-metrics';

export const workflowMetricsSinks: InjectedSinks<WorkflowMetricsSinks> = {
  workflowMetrics: {
    ended: {
      fn: (info, state, outcome) =>
        workflowSeconds.observe({ workflow: info.workflowType, state, outcome }, Math.max(0, Date.now() - info.runStartTime.getTime()) / 1000),
      callDuringReplay: false,
    },
  },
};
