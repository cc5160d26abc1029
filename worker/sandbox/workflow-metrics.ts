// Workflow code (bundled with workflows/ by worker/workflow-bundle.ts, inside Temporal's
// sandbox): when a run ends, it tells the worker's `workflowMetrics` sink how, and the sink
// (worker/workflow-metrics-sink.ts) times it into ironflow_workflow_duration_seconds. A sink
// is not called on replay, so a run is counted when it ends, not again when a worker
// rebuilds its history. An error that is not a Temporal failure fails the workflow task
// (retried), not the run: not counted.
import { ContinueAsNew, isCancellation, proxySinks, TemporalFailure, workflowInfo, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { provisionStates } from '../../core/provision-states';

export type WorkflowOutcome = 'completed' | 'failed' | 'canceled' | 'continued-as-new';

export interface WorkflowMetricsSinks extends Sinks {
  workflowMetrics: {
    /** `state`: the provision state a provision run served, '' for other workflows. */
    ended(state: string, outcome: WorkflowOutcome): void;
  };
}

const { workflowMetrics } = proxySinks<WorkflowMetricsSinks>();

const knownStates: ReadonlySet<string> = new Set(provisionStates);

/** A provision run's second argument is its ProvisionTarget; the label keeps to the state table. */
function provisionStateOf(args: unknown[]): string {
  if (workflowInfo().workflowType !== 'provision') return '';
  const target = args[1] as { provisionState?: unknown } | undefined;
  return typeof target?.provisionState === 'string' && knownStates.has(target.provisionState) ? target.provisionState : '';
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const state = provisionStateOf(input.args);
        try {
          const result = await next(input);
          workflowMetrics.ended(state, 'completed');
          return result;
        } catch (err) {
          if (err instanceof ContinueAsNew) workflowMetrics.ended(state, 'continued-as-new');
          else if (isCancellation(err)) workflowMetrics.ended(state, 'canceled');
          else if (err instanceof TemporalFailure) workflowMetrics.ended(state, 'failed');
          throw err;
        }
      },
    },
  ],
});
