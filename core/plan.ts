// The plan: what the compiler makes of a profile version, and the argument of the
// `provision` workflow, so a workflow history shows exactly what ran. Pure data.
import type { QueueKind } from './agent-queues';
import type { QuorumBundle } from '../services/quorum/documents';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface PlanRetry {
  /** Attempts in all (first try included); 1 for a step whose retry class is `once`. */
  maximumAttempts: number;
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  /** The failure types (error codes) another attempt cannot help: core/errors.ts nonRetryableCodes (absent in plans compiled before it, in older histories). */
  nonRetryableErrorTypes?: string[];
}

export type PlanRoute = 'control' | 'workflow' | 'site-agent' | 'ramdisk' | 'node';

export interface PlanStep {
  /** Where it came from in the profile: `steps[2]`, `steps[2].fallback`, `cleanup[0]`. */
  key: string;
  use: string;
  /** The Temporal activity name workers register. */
  activity: string;
  /** Whose task queue runs it (`on`; control when absent, and for a step the workflow runs itself). */
  queue: QueueKind;
  /**
   * How the task queue is found: `control` → the control-plane queue; `site-agent` →
   * `site.<siteId>.<agent>` picked by siteAgentFor; `ramdisk` / `node` → `<kind>.<nodeId>`;
   * `workflow` → the provision interpreter runs the step itself (the registry's `workflow`
   * steps: metal.ensureRamdisk, wait.agentJoined, media.insert).
   */
  route: PlanRoute;
  with: JsonObject;
  timeoutMs: number;
  /** Agents' queues: how long a task may wait for a worker before the step is re-routed. */
  scheduleToStartMs?: number;
  heartbeatMs?: number;
  retry: PlanRetry;
  /**
   * `rejoin`: after the activity, wait for the agentJoined signal (up to the timeout).
   * `confirmMac`: before the activity, wait for an operator's confirmMac; the step gets it.
   */
  await?: 'rejoin' | 'confirmMac';
  onFailure: 'fail' | 'continue';
  fallback?: PlanStep;
  when?: string;
}

export interface PlanProfileRef {
  tenantId: string;
  id: string;
  version: number;
  /** `id@version`, the ProfileRef search attribute. */
  ref: string;
}

export interface Plan {
  profile: PlanProfileRef;
  target: 'metal' | 'vm';
  role: 'host' | 'dedicated';
  /** References only: the image ref, the user-data kind and template name. */
  image?: JsonObject;
  userData?: JsonObject;
  steps: PlanStep[];
  acceptance: PlanStep[];
  cleanup: PlanStep[];
}

/** The machine a plan runs on. */
export interface ProvisionTarget {
  tenantId: string;
  nodeId: string;
  siteId: string;
  /** The provision state this run serves (`deploying`, `inspecting`, …). */
  provisionState: string;
  labels: Record<string, string>;
}

/** What every step activity receives. Never a secret: references only. */
export interface StepInput {
  workflowId: string;
  stepKey: string;
  use: string;
  with: JsonObject;
  target: ProvisionTarget;
  /** For relaying control steps: the site agent picked for this attempt. */
  siteAgent?: SiteAgentChoice;
  /** For steps with await: 'confirmMac': the MAC the operator confirmed (aa:bb:cc:dd:ee:ff). */
  confirmedMac?: string;
  /** For a control step's second half: what the machine answered to its relay (see StepRelay). */
  relayResult?: JsonValue;
  /** The run's approved destructive-batch quorum bundle (docs/quorum.md): agents check it before a destructive command. */
  quorum?: QuorumBundle;
}

/**
 * A control step may answer this instead of its result: the workflow then runs `activity`
 * on the machine's own queue (ramdisk.<id> / node.<id>) with `with`, and, when `then` is
 * given, calls that control activity with the machine's answer as relayResult. How
 * deploy.deploy checks the image before anything is sent and the digest after.
 */
export interface StepRelay {
  relayTo: { queue: 'ramdisk' | 'node'; activity: string; with: JsonObject; then?: string };
}

export const isStepRelay = (value: unknown): value is StepRelay =>
  typeof value === 'object' && value !== null && 'relayTo' in value && typeof (value as StepRelay).relayTo?.activity === 'string';

export interface SiteAgentChoice {
  agentNodeId: string;
  taskQueue: string;
  /** Why this one: the boot-lease holder, or the first connected agent by id. */
  reason: 'lease-holder' | 'first-connected';
}

export interface StepRecord {
  key: string;
  use: string;
  outcome: 'succeeded' | 'skipped' | 'failed' | 'continued' | 'fallback' | 'cancelled';
  error?: string;
}

export interface ProvisionStatus {
  phase: 'steps' | 'acceptance' | 'cleanup' | 'succeeded' | 'failed' | 'cancelled';
  step: { key: string; use: string; queue: QueueKind; taskQueue?: string; attempt: number; startedAt: string } | null;
  /** Why the workflow is not making progress right now, if it waits. */
  waitingFor: string | null;
  /** Progress the workflow itself knows of the running step (ensureRamdisk: until when it waits); the API adds the step's last heartbeat. */
  progress: JsonValue | null;
  history: StepRecord[];
  abortReason: string | null;
  confirmedMac: string | null;
  rejectedSignals: Array<{ name: string; reason: string }>;
  error: string | null;
}

export interface ProvisionResult {
  outcome: 'succeeded';
  history: StepRecord[];
  /** What each succeeded step answered, by step key (references and facts only, never secrets). */
  outputs: Record<string, JsonValue>;
}
