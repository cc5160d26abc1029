// The site agent's Temporal worker: activities only, on its own task queue (from the join
// answer), registering exactly SITE_STEP_KINDS (agent/common/restricted-worker.ts refuses
// anything else). Each step heartbeats, so a step whose agent died is noticed and re-routed.
import type { AgentTemporal } from '../../core/schemas/join';
import type { AgentCredentials } from '../common/gateway-connection';
import { startRestrictedWorker, type AgentActivity, type RestrictedWorker } from '../common/restricted-worker';
import { heartbeating } from '../common/heartbeating';
import { reportingFailures } from '../common/step-failure';
import { SITE_STEP_KINDS, type SiteStepKind } from './step-kinds';
import type { SiteStep } from './steps/deps';

export type SiteWorker = RestrictedWorker;

interface SiteWorkerOptions {
  temporal: AgentTemporal;
  credentials: AgentCredentials;
  steps: Record<SiteStepKind, SiteStep>;
}

export async function startSiteWorker(options: SiteWorkerOptions): Promise<SiteWorker> {
  const activities: Record<string, AgentActivity> = {};
  for (const kind of SITE_STEP_KINDS) activities[kind] = heartbeating(reportingFailures(options.steps[kind]));
  return startRestrictedWorker({
    mode: 'site',
    kinds: SITE_STEP_KINDS,
    activities,
    temporal: options.temporal,
    credentials: options.credentials,
    shutdownGraceTime: '5s',
  });
}
