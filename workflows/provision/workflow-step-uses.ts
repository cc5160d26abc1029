// The steps the provision workflow runs itself (route `workflow`): no worker serves them as
// an activity. Pure data, so the workers' checks (test/unit/steps-served.test.ts) read it
// without loading workflow code.
export const WORKFLOW_STEP_USES = ['metal.ensureRamdisk', 'wait.agentJoined', 'media.insert'] as const;
export type WorkflowStepUse = (typeof WORKFLOW_STEP_USES)[number];
