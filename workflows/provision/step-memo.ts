// The run's memo names its profile, from the start. Runs begun before 2026-12-02 also named the
// running step in it, with an upsert per step: a command, a history event and a visibility
// write on the Temporal server each, for what the Web UI's current details already show
// (status.ts). Those runs go on upserting it, so their histories replay (a patch, ../patches.ts).
import { upsertMemo } from '@temporalio/workflow';
import { takesPatch } from '../patches';

/** In a run begun when the memo named the step: the memo's step and use (null after the last). */
export function showStepInMemo(step: { key: string; use: string } | null): void {
  if (takesPatch('memo-without-step')) return;
  upsertMemo(step ? { step: step.key, use: step.use } : { step: null, use: null });
}
