// Whether a run takes a versioned change (../core/workflow-patches.ts). patched() records a
// marker in every run that reaches the change, and the SDK upserts the TemporalChangeVersion
// search attribute with it: an event and a visibility write each on the Temporal server, a
// few per run, for a fleet thousands. A run whose input carries a patch level knows it was
// started by code with the first `level` changes, and takes them without a marker; only a
// change newer than its level, or any change in a run begun before levels (level 0), goes
// through patched(), so every recorded history replays as it ran.
//
// A run whose level is above what this code knows was started by newer code (an API upgraded
// before its workers, or workers rolled back): taking it here would run without changes its
// history will be replayed with. Its workflow task fails instead, and Temporal retries it
// until a worker with the newer code takes it.
import { patched } from '@temporalio/workflow';
import { CURRENT_PATCH_LEVEL, WORKFLOW_PATCHES, type WorkflowPatch } from '../core/workflow-patches';

// Module state is the run's own: the workflow sandbox loads these modules afresh for each run.
let runPatchLevel = 0;

/** Called first thing in a run with its input's level (undefined in a run begun before levels). */
export function enterPatchLevel(level: number | undefined): void {
  if (level !== undefined && level > CURRENT_PATCH_LEVEL) {
    // Not an ApplicationFailure: that would fail the run; any other error fails only this workflow task.
    throw new Error(
      `this run was started at patch level ${level} and this worker's workflow code knows ${CURRENT_PATCH_LEVEL} patches: upgrade the worker to the starter's release; the run waits and is retried`,
    );
  }
  runPatchLevel = level ?? 0;
}

/** Whether this run takes `patch`: always when its level includes it, else as patched() answers. */
export function takesPatch(patch: WorkflowPatch): boolean {
  return WORKFLOW_PATCHES.indexOf(patch) < runPatchLevel || patched(patch);
}

/**
 * Whether this run was started by code that knows `patch`: for a change that only runs begun
 * with it take (a signal handler's, where a marker would be recorded wherever a signal lands).
 */
export function startedWith(patch: WorkflowPatch): boolean {
  return WORKFLOW_PATCHES.indexOf(patch) < runPatchLevel;
}
