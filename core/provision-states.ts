// THE provision state table (spec 004, "The provision state machine", "The metal API group",
// "Failure and recovery"). Every verb, API method and the node lifecycle workflow decide
// moves here and nowhere else; an illegal move is INVALID_STATE. Pure data and functions:
// the lifecycle workflow imports it too.
import { IronflowError } from './errors';

export const provisionStates = [
  'adopting',
  'adopted',
  'enrolling',
  'inspecting',
  'commissioning',
  'ready',
  'deploying',
  'deployed',
  'releasing',
  'rescue',
  'failed',
  'retiring',
  'retired',
] as const;
export type ProvisionState = (typeof provisionStates)[number];

/** Within `rescue`: the rescue ramdisk is booting, booted (the node rests), or metal-unrescue runs. */
export const rescuePhases = ['booting', 'booted', 'unrescuing'] as const;
export type ProvisionPhase = (typeof rescuePhases)[number];

/** The verbs of the state machine (`undeploy` in the API is the verb `release`: apiVerbName). */
export const provisionVerbs = ['manage', 'inspect', 'provide', 'deploy', 'release', 'rescue', 'unrescue', 'abort', 'recover', 'retire'] as const;
export type ProvisionVerb = (typeof provisionVerbs)[number];

/** A verb as the API, the CLI and the events name it (spec 004 "The metal API group"). */
export type ApiVerb = Exclude<ProvisionVerb, 'release'> | 'undeploy';

/** The API's name of a state-machine verb: `release` is `undeploy` there; every other verb keeps its name. */
export function apiVerbName(verb: ProvisionVerb): ApiVerb {
  return verb === 'release' ? 'undeploy' : verb;
}

/** The state-machine verb an API verb names (apiVerbName's inverse). */
export function provisionVerbNamed(verb: ApiVerb): ProvisionVerb {
  return verb === 'undeploy' ? 'release' : verb;
}

/** Where each verb is legal and where it moves the node. `recover`'s target comes from the recover table. */
export const verbTable: Readonly<Record<ProvisionVerb, { from: readonly ProvisionState[]; to: ProvisionState | 'recover-target' }>> = {
  manage: { from: ['ready'], to: 'enrolling' },
  inspect: { from: ['ready'], to: 'inspecting' },
  provide: { from: ['ready'], to: 'commissioning' },
  deploy: { from: ['ready'], to: 'deploying' },
  release: { from: ['deployed', 'rescue'], to: 'releasing' },
  rescue: { from: ['deployed'], to: 'rescue' },
  // The node stays in rescue while metal-unrescue runs; `complete` moves it to deployed.
  unrescue: { from: ['rescue'], to: 'rescue' },
  abort: { from: ['enrolling', 'inspecting', 'commissioning', 'deploying', 'releasing'], to: 'failed' },
  recover: { from: ['failed'], to: 'recover-target' },
  retire: { from: ['adopting', 'adopted', 'enrolling', 'ready', 'failed'], to: 'retiring' },
};

/** `failedFrom` → where `recover` goes: the last stable point, never straight to ready. */
export const recoverTable: Readonly<Partial<Record<ProvisionState, ProvisionState>>> = {
  enrolling: 'enrolling',
  inspecting: 'enrolling',
  commissioning: 'enrolling',
  deploying: 'releasing',
  releasing: 'releasing',
  rescue: 'deployed',
  retiring: 'retiring',
};

/** States whose node is driven by a workflow (the lifecycle makes sure exactly that one runs). */
export const workflowDrivenStates = [
  'enrolling',
  'inspecting',
  'commissioning',
  'deploying',
  'releasing',
  'retiring',
  'rescue',
] as const satisfies readonly ProvisionState[];
export type WorkflowDrivenState = (typeof workflowDrivenStates)[number];

/** What `complete` (the state's workflow succeeded) moves to. */
export const completeTable: Readonly<Record<WorkflowDrivenState, ProvisionState>> = {
  enrolling: 'inspecting',
  inspecting: 'commissioning',
  commissioning: 'ready',
  deploying: 'deployed',
  releasing: 'ready', // only with a verified wipe, else UNVERIFIED_WIPE (see completeMove)
  retiring: 'retired',
  rescue: 'rescue', // booting → booted; unrescuing → deployed (see completeMove)
};

/** Only these can be scheduled. */
export const schedulableProvisionStates: readonly ProvisionState[] = ['adopted', 'deployed'];

/** `metal.power` is refused while a workflow drives the machine's power itself. */
export const powerBlockedStates: readonly ProvisionState[] = ['inspecting', 'commissioning', 'deploying', 'releasing'];

export const terminalStates: readonly ProvisionState[] = ['retired'];

export interface ProfileRef {
  id: string;
  version: number;
}

export type StateWorkflow =
  | { kind: 'profile'; profile: ProfileRef }
  /** deploying runs the profile named in metal.deploy. */
  | { kind: 'deploy-profile' }
  /** The state has no workflow on this pool: the lifecycle fails the node with this. */
  | { kind: 'unsupported'; reason: string };

/** The shipped profile per workflow-driven state; agentless pools (`agent: 'none'`) use the -oob variants. */
export const stateProfiles: Readonly<Record<Exclude<WorkflowDrivenState, 'deploying' | 'rescue'>, { agent: string; oob: string }>> = {
  enrolling: { agent: 'metal-enroll', oob: 'metal-enroll' }, // BMC work only: the same on every pool
  inspecting: { agent: 'metal-inspect', oob: 'metal-inspect-oob' },
  commissioning: { agent: 'metal-commission', oob: 'metal-commission-oob' },
  releasing: { agent: 'metal-release', oob: 'metal-release-oob' },
  retiring: { agent: 'metal-retire', oob: 'metal-retire-oob' },
};

export const isProvisionState = (value: unknown): value is ProvisionState =>
  typeof value === 'string' && (provisionStates as readonly string[]).includes(value);
export const isWorkflowDriven = (state: string | null | undefined): state is WorkflowDrivenState =>
  typeof state === 'string' && (workflowDrivenStates as readonly string[]).includes(state);
export const isSchedulable = (state: string | null | undefined): boolean =>
  typeof state === 'string' && schedulableProvisionStates.includes(state as ProvisionState);

/**
 * The workflow the node must be running in `state` (and rescue `phase`), or null when the
 * node rests there. `agentless` is the pool's `policy.agent === 'none'`.
 */
export function workflowFor(state: string | null | undefined, phase: string | null | undefined, agentless: boolean): StateWorkflow | null {
  if (!isWorkflowDriven(state)) return null;
  if (state === 'deploying') return { kind: 'deploy-profile' };
  if (state === 'rescue') {
    if (agentless) return { kind: 'unsupported', reason: 'rescue boots a ramdisk, which machines of an agentless pool (agent: none) never run' };
    if (phase === 'booted') return null;
    return { kind: 'profile', profile: { id: phase === 'unrescuing' ? 'metal-unrescue' : 'metal-rescue', version: 1 } };
  }
  const names = stateProfiles[state];
  return { kind: 'profile', profile: { id: agentless ? names.oob : names.agent, version: 1 } };
}

function invalidState(message: string, details: Record<string, unknown>): IronflowError {
  return new IronflowError('INVALID_STATE', message, details);
}

export interface NodeStateView {
  state: string | null;
  phase?: string | null;
  failedFrom?: string | null;
}

export interface Move {
  to: ProvisionState;
  phase: ProvisionPhase | null;
}

/** Where `verb` moves a node in `node.state`, or INVALID_STATE naming the legal states. */
export function verbMove(verb: ProvisionVerb, node: NodeStateView): Move {
  const rule = verbTable[verb];
  const from = node.state;
  if (!isProvisionState(from) || !rule.from.includes(from)) {
    const hint = from === 'retired' ? '; retired is terminal' : '';
    throw invalidState(`${verb} is legal from ${rule.from.join(', ')}; the node is ${from ?? 'not a metal node'}${hint}`, {
      verb,
      state: from,
      legalFrom: [...rule.from],
    });
  }
  if (verb === 'recover') {
    const target = isProvisionState(node.failedFrom) ? recoverTable[node.failedFrom] : undefined;
    if (!target) throw invalidState(`recover has no target for failedFrom ${node.failedFrom ?? '(none)'}`, { verb, failedFrom: node.failedFrom ?? null });
    return { to: target, phase: null };
  }
  if (verb === 'rescue') return { to: 'rescue', phase: 'booting' };
  if (verb === 'unrescue') return { to: 'rescue', phase: 'unrescuing' };
  return { to: rule.to as ProvisionState, phase: null };
}

/** `complete`: the state's workflow succeeded. `wipeVerified` matters for releasing only. */
export function completeMove(node: NodeStateView, opts: { wipeVerified?: boolean } = {}): Move {
  const state = node.state;
  if (!isWorkflowDriven(state)) throw invalidState(`complete applies to a workflow-driven state; the node is ${state ?? 'not a metal node'}`, { state });
  if (state === 'rescue') return node.phase === 'unrescuing' ? { to: 'deployed', phase: null } : { to: 'rescue', phase: 'booted' };
  if (state === 'releasing' && !opts.wipeVerified) {
    throw new IronflowError(
      'UNVERIFIED_WIPE',
      'the release wipe was not verified (no node-signed result, or a disk failed read-back): the node is not released to ready',
      { state },
    );
  }
  return { to: completeTable[state], phase: null };
}

/** `fail`: the state's workflow failed or was cancelled (or an operator aborted it). */
export function failMove(node: NodeStateView): Move & { failedFrom: WorkflowDrivenState } {
  const state = node.state;
  if (!isWorkflowDriven(state)) throw invalidState(`fail applies to a workflow-driven state; the node is ${state ?? 'not a metal node'}`, { state });
  return { to: 'failed', phase: null, failedFrom: state };
}

/**
 * The adopt path (spec 004: `adopting` runs the pool's acceptance checks on the server, no
 * provision profile): they passed → adopted; one failed → failed, failedFrom adopting.
 */
export function acceptanceMove(node: NodeStateView, passed: boolean): Move & { failedFrom?: 'adopting' } {
  if (node.state !== 'adopting')
    throw invalidState(`acceptance checks decide a node in adopting; the node is ${node.state ?? 'not a metal node'}`, { state: node.state ?? null });
  return passed ? { to: 'adopted', phase: null } : { to: 'failed', phase: null, failedFrom: 'adopting' };
}

/** `metal.power` is legal in every state but those whose workflow drives power (and retired: no BMC credentials). */
export function checkPowerAllowed(state: string | null): void {
  if (state !== null && powerBlockedStates.includes(state as ProvisionState)) {
    throw invalidState(`power is refused while the node is ${state}: its workflow drives the power; abort it first`, {
      state,
      blockedIn: [...powerBlockedStates],
    });
  }
  if (state === 'retired') throw invalidState('the node is retired: its BMC credentials are forgotten', { state });
}
