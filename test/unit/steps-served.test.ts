// Every step the registry declares is served where it says it runs: a profile that validates
// can never name a step no worker answers (gpu.reset and media.eject once were declared,
// used by shipped profiles and served by nobody). Checked against the workers' own lists:
// the control plane's activities and each agent mode's step kinds.
import { describe, expect, it } from 'vitest';
import { NODE_STEP_KINDS } from '../../agent/node/steps';
import { RAMDISK_STEP_KINDS } from '../../agent/ramdisk/main';
import { SITE_STEP_KINDS } from '../../agent/site/step-kinds';
import { createActivities } from '../../activities';
import type { ActivityDeps } from '../../activities/deps';
import type { QueueKind } from '../../core/agent-queues';
import { loadConfig } from '../../services/config';
import { stepRegistry } from '../../core/steps/builtin';
import { stepActivityName } from '../../core/steps/registry';
import { shippedProfiles } from '../../profiles/shipped';
import { WORKFLOW_STEP_USES } from '../../workflows/provision/workflow-step-uses';

/** The activities each worker registers (building the control plane's reads its config, and uses nothing else until one runs). */
const served: Record<QueueKind, readonly string[]> = {
  // The provision workflow runs its workflow steps itself (metal.ensureRamdisk, wait.agentJoined, media.insert).
  control: [...Object.keys(createActivities({ config: loadConfig() } as ActivityDeps)), ...WORKFLOW_STEP_USES],
  site: SITE_STEP_KINDS,
  ramdisk: RAMDISK_STEP_KINDS,
  node: NODE_STEP_KINDS,
};

describe('the step registry and the workers', () => {
  it('serves every declared step on every queue it may run on', () => {
    const unserved = stepRegistry
      .list()
      .flatMap((step) => step.queues.filter((queue) => !served[queue].includes(stepActivityName(step))).map((queue) => `${step.use} on ${queue}`));
    expect(unserved).toEqual([]);
  });

  it('serves every step of every shipped profile where the profile runs it', () => {
    const unserved = shippedProfiles().flatMap((profile) =>
      profile.steps.flatMap((step) => {
        const definition = stepRegistry.get(step.use);
        const queue = (step.on ?? definition?.queues[0]) as QueueKind;
        return definition && served[queue].includes(stepActivityName(definition)) ? [] : [`${profile.id}: ${step.use} on ${queue}`];
      }),
    );
    expect(unserved).toEqual([]);
  });
});
