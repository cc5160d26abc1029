// What a bulk verb's whole chain may do, for the one quorum batch that covers it (docs/quorum.md):
// the workflow-driven states the verb leads through (manage: enrolling → inspecting →
// commissioning; undeploy: releasing …) and every destructive command kind their shipped
// profiles send, agent and -oob variants alike, since approvers sign once for the lot.
import { completeTable, isWorkflowDriven, stateProfiles, verbTable, type ProvisionVerb, type WorkflowDrivenState } from '../core/provision-states';
import { destructiveKindsOf, type DestructiveKind } from '../core/quorum/destructive';
import { shippedProfiles } from './shipped';

export interface VerbChain {
  states: WorkflowDrivenState[];
  commands: DestructiveKind[];
}

/** Profiles whose states the chain passes (rescue runs metal-rescue; deploy is never a bulk verb). */
const profilesOf = (state: WorkflowDrivenState): string[] =>
  state === 'rescue' ? ['metal-rescue'] : state === 'deploying' ? [] : [stateProfiles[state].agent, stateProfiles[state].oob];

export function bulkVerbChain(verb: ProvisionVerb): VerbChain {
  const states: WorkflowDrivenState[] = [];
  let state: string = verbTable[verb].to;
  while (isWorkflowDriven(state) && !states.includes(state)) {
    states.push(state);
    state = completeTable[state];
  }
  const ids = new Set(states.flatMap(profilesOf));
  const uses = shippedProfiles()
    .filter((p) => ids.has(p.id))
    .flatMap((p) => [...p.steps, ...(p.cleanup ?? [])].flatMap((s) => [s.use, ...(s.fallback ? [s.fallback.use] : [])]));
  return { states, commands: destructiveKindsOf(uses) };
}
