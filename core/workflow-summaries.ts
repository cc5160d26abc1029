// What the Temporal Web UI shows of our workflows, worded once: a workflow's static summary
// (node, state, profile, site), an activity's summary (step key, `use`, where it went) and
// a workflow's current details (Temporal's setCurrentDetails: the step, what it waits for
// and since when, progress). Pure: the workflow bundle imports it, so no I/O and no clock.
import type { JsonValue, Plan, ProvisionStatus } from './plan';

/** The Web UI cuts long texts anyway; bounded here so a runaway value never bloats a history. */
const MAX_SUMMARY = 400;
const MAX_DETAILS = 2000;
const MAX_VALUE = 120;

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export interface ProvisionSummaryInput {
  nodeId: string;
  state: string;
  profileRef: string;
  siteId: string;
}

/** `node node_… · commissioning · metal-commission@1 · site site_…` */
export const provisionSummary = (run: ProvisionSummaryInput): string =>
  clip(`node ${run.nodeId} · ${run.state} · ${run.profileRef} · site ${run.siteId}`, MAX_SUMMARY);

/**
 * The lifecycle (`node:<id>`) names no state: it drives every state of the node in turn and
 * its summary is fixed at its start; the current details say which state it drives now.
 */
export const lifecycleSummary = (node: { nodeId: string; siteId: string }): string =>
  clip(`node ${node.nodeId} · lifecycle · site ${node.siteId}`, MAX_SUMMARY);

/** The plan at a glance, for the workflow's static details: one line per step. */
export function planDetails(plan: Plan): string {
  const line = (step: Plan['steps'][number]) => `- \`${step.key}\` ${step.use} (${step.queue}${step.await ? `, then waits for ${step.await}` : ''})`;
  const sections: Array<[string, Plan['steps']]> = [
    ['Steps', plan.steps],
    ['Acceptance', plan.acceptance],
    ['Cleanup', plan.cleanup],
  ];
  // A blank line before each list: the Web UI's markdown does not let a list interrupt a paragraph.
  const body = sections.filter(([, steps]) => steps.length > 0).map(([title, steps]) => `**${title}**\n\n${steps.map(line).join('\n')}`);
  return clip([`Profile ${plan.profile.ref} (${plan.target}, ${plan.role})`, ...body].join('\n\n'), MAX_DETAILS);
}

/** `steps[1] · metal.ensureRamdisk → site.site_….node_…`: the step, its `use`, and the queue (or agent) it went to. */
export const activitySummary = (stepKey: string, use: string, destination: string): string => clip(`${stepKey} · ${use} → ${destination}`, MAX_SUMMARY);

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
function bytes(n: number): string {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${BYTE_UNITS[unit]}`;
}

const isRecord = (v: JsonValue | null): v is { [key: string]: JsonValue } => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: JsonValue | undefined): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/** A step's progress in words: an image write's bytes (of its size), else its fields. The wait itself is shown apart. */
export function progressText(progress: JsonValue | null): string | null {
  if (progress === null) return null;
  if (!isRecord(progress)) return clip(JSON.stringify(progress), MAX_VALUE);
  const written = num(progress.bytesWritten);
  if (written !== undefined) {
    const total = num(progress.sizeBytes) ?? num(progress.bytesTotal);
    return total ? `${bytes(written)} of ${bytes(total)} written (${Math.min(100, Math.floor((written / total) * 100))}%)` : `${bytes(written)} written`;
  }
  const fields = Object.entries(progress)
    .filter(([key]) => key !== 'waitingFor' && key !== 'since')
    .map(([key, value]) => `${key}: ${clip(typeof value === 'string' ? value : JSON.stringify(value), MAX_VALUE)}`);
  return fields.length > 0 ? fields.join(', ') : null;
}

/** The provision workflow's current details (markdown), from its status and when its wait began (workflow time). */
export function provisionDetails(status: ProvisionStatus, waitingSince: string | null): string {
  const lines: string[] = [];
  if (status.phase !== 'steps') lines.push(`**Phase:** ${status.phase}`);
  const step = status.step;
  if (step) {
    const where = step.taskQueue ? ` · on ${step.taskQueue}` : '';
    // Attempt 0: nothing sent yet (a site step still looking for an agent).
    const attempt = step.attempt > 0 ? ` · attempt ${step.attempt}` : '';
    lines.push(`**Step:** \`${step.key}\` ${step.use}${where}${attempt} · since ${step.startedAt}`);
  }
  if (status.waitingFor) lines.push(`**Waiting for:** ${status.waitingFor}${waitingSince ? ` · since ${waitingSince}` : ''}`);
  const progress = progressText(status.progress);
  if (progress) lines.push(`**Progress:** ${progress}`);
  if (status.abortReason) lines.push(`**Aborted:** ${status.abortReason}`);
  if (status.error) lines.push(`**Error:** ${status.error}`);
  if (lines.length === 0) lines.push(`**Phase:** ${status.phase}`);
  return clip(lines.map((l) => clip(l, MAX_SUMMARY)).join('\n\n'), MAX_DETAILS);
}

/** The lifecycle's current details: the state it drives and the child that runs it, or where the node rests. */
export function lifecycleDetails(now: { state: string | null; child?: string; since: string; transitions: number }): string {
  const lines = now.child
    ? [`**Drives:** ${now.state ?? 'no state'}`, `**Child:** \`${now.child}\` · since ${now.since}`]
    : [`**State:** ${now.state ?? 'not a metal node'} · since ${now.since}`];
  lines.push(`**Transitions this run:** ${now.transitions}`);
  return clip(lines.join('\n\n'), MAX_DETAILS);
}
