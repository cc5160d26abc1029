// A workflow's own bookkeeping on the control plane (the lifecycle's reads and writes of the
// node's row; a provision run's boot state, boot entries, boot slot, ramdisk queue and image):
// short database reads and writes, run as local activities by the control-plane worker that
// runs the workflow. It runs the control queue's activities too, so they run where they ran
// before, but each is one marker in the history instead of a task handed through the Temporal
// server and a workflow task more, and the server is a fleet's busiest process (bench/README.md,
// "The fleet"). Runs begun before sent each as a task on the control queue, and replay so
// (patches.ts).
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { LocalActivityOptions } from '@temporalio/common';
import type { WorkflowPatch } from '../core/workflow-patches';
import { takesPatch } from './patches';

/** The activities of `A` as a workflow calls them: local ones, or control-queue tasks in a run begun before `patch`. */
export function localBookkeeping<A>(patch: WorkflowPatch, options: LocalActivityOptions): () => A {
  const queued = proxyActivities<A>(options) as A;
  const local = proxyLocalActivities<A>(options) as A;
  return () => (takesPatch(patch) ? local : queued);
}
