// The step registry and the workers serve exactly the same steps: a profile that validates
// can never name a step no worker answers (gpu.reset and media.eject once were declared,
// used by shipped profiles and served by nobody), and no agent serves a kind the registry
// does not declare. Checked against the workers' own lists: the control plane's activities
// and each agent mode's step kinds (which the agents' step maps are typed by).
import { describe, expect, it } from 'vitest';
import { NODE_STEP_KINDS } from '../../agent/node/steps';
import { RAMDISK_STEP_KINDS } from '../../agent/ramdisk/main';
import { SITE_STEP_KINDS } from '../../agent/site/step-kinds';
import { createActivities } from '../../activities';
import type { ActivityDeps } from '../../activities/deps';
import { loadConfig } from '../../services/config';
import { stepRegistry } from '../../core/steps/builtin';
import { agentQueues, servedQueues, stepActivityName, type AgentQueue, type StepQueue } from '../../core/steps/registry';
import { shippedProfiles } from '../../profiles/shipped';
import { runsOn } from '../../profiles/check';
import { workflowSteps } from '../../workflows/provision/workflow-steps';

/** The activities the control plane registers (building them reads its config, and uses nothing else until one runs). */
const controlActivities = Object.keys(createActivities({ config: loadConfig() } as ActivityDeps));
/** What each worker registers; `workflow` steps are run by the provision interpreter itself. */
const served: Record<StepQueue, readonly string[]> = {
  control: controlActivities,
  workflow: [...workflowSteps.keys()],
  site: SITE_STEP_KINDS,
  ramdisk: RAMDISK_STEP_KINDS,
  node: NODE_STEP_KINDS,
};

describe('the step registry and the workers', () => {
  it('serves every declared step on every queue it may run on', () => {
    const unserved = stepRegistry.list().flatMap((step) =>
      servedQueues(step)
        .filter((queue) => !served[queue].includes(stepActivityName(step)))
        .map((queue) => `${step.use} on ${queue}`),
    );
    expect(unserved).toEqual([]);
  });

  it.each([...agentQueues, 'workflow'] as const)(
    'the %s worker serves no kind the registry does not declare on its queue',
    (queue: AgentQueue | 'workflow') => {
      const declared = stepRegistry.servedOn(queue);
      expect([...served[queue]].sort()).toEqual([...declared].sort());
    },
  );

  it('serves every step of every shipped profile where the profile runs it', () => {
    const unserved = shippedProfiles().flatMap((profile) =>
      profile.steps.flatMap((step) => {
        const definition = stepRegistry.get(step.use);
        if (!definition) return [`${profile.id}: ${step.use} is not declared`];
        const queue = runsOn(definition, step);
        return served[queue].includes(stepActivityName(definition)) ? [] : [`${profile.id}: ${step.use} on ${queue}`];
      }),
    );
    expect(unserved).toEqual([]);
  });
});
