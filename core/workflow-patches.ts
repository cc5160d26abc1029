// Every versioned change to what the workflow code sends Temporal, oldest first. A run started
// by code that knows the first n carries n (its patch level): it takes those without asking,
// so they cost its history nothing (workflows/patches.ts). Only ever appended to: a level
// counts from the front, and a run's level outlives the code that started it.
export const WORKFLOW_PATCHES = [
  'memo-without-step',
  'boot-slots',
  'ramdisk-queue-per-boot',
  'provision-local-leaves',
  'lifecycle-local-activities',
  'provision-local-site-routing',
  'provision-local-quorum',
  'resend-lost-agent-task',
  'join-recheck',
  'ask-agent-step-outcome',
  'site-pxe-boot',
  'lifecycle-waits-child-close',
  'state-end-on-request',
] as const;

export type WorkflowPatch = (typeof WORKFLOW_PATCHES)[number];

/** The level a run started by this code carries: every change it knows. */
export const CURRENT_PATCH_LEVEL = WORKFLOW_PATCHES.length;
