// The control plane's Prometheus metrics (prom-client), served at GET /metrics
// (api/routes/metrics.ts) together with the Temporal SDK's own worker metrics. Labels name
// kinds, never tenants or nodes, so a series count stays bounded however large the fleet.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

const registers = [metricsRegistry];

/**
 * Gauges read from the database at each scrape (api/routes/metrics.ts). Only the process
 * answering the scrape sets them, so they stay out of `metricsRegistry`, whose values are
 * summed over the API's processes (stack/api-processes.ts).
 */
export const scrapedRegistry = new Registry();

export const apiRequestSeconds = new Histogram({
  name: 'ironflow_api_request_duration_seconds',
  help: 'API requests by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers,
});

export const agentStepSeconds = new Histogram({
  name: 'ironflow_agent_step_duration_seconds',
  help: 'Steps agents ran through the gateway, from their poll to their answer, by step, agent role and outcome',
  labelNames: ['step', 'role', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
  registers,
});

export const bootSlotsReclaimed = new Counter({
  name: 'ironflow_boot_slots_reclaimed_total',
  help: 'Boot slots freed because their run ended without giving them back (a terminated or timed-out workflow)',
  registers,
});

export const gatewayCallsRefused = new Counter({
  name: 'ironflow_gateway_calls_refused_total',
  help: "Agents' calls refused for load, by the agent's role and why: too-many-open-calls (the gateway: the identity had its limit of calls open) or temporal-resource-exhausted (Temporal: for polls, its frontend.namespaceCount)",
  labelNames: ['role', 'reason'] as const,
  registers,
});

export const gatewayTasksUndelivered = new Counter({
  name: 'ironflow_gateway_tasks_undelivered_total',
  help: "Tasks Temporal handed to an agent's poll through the gateway that the agent had given up waiting for: Temporal counts each as started, and it runs again once its step's heartbeat (or start-to-close) timeout passes",
  labelNames: ['role'] as const,
  registers,
});

export const gatewayCallErrors = new Counter({
  name: 'ironflow_gateway_call_errors_total',
  help: "Agents' calls through the agent gateway answered with an error, by the agent's role (empty when its certificate could not be checked), the call and the gRPC status: the gateway's refusals (UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED, UNAVAILABLE), Temporal's errors (NOT_FOUND for a task no longer open, DEADLINE_EXCEEDED …) and calls the agent gave up (CANCELLED)",
  labelNames: ['role', 'method', 'code'] as const,
  registers,
});

export const gatewayCalls = new Counter({
  name: 'ironflow_gateway_calls_total',
  help: "Agents' calls the agent gateway forwarded to Temporal, by the agent's role and the call (PollActivityTaskQueue, RecordActivityTaskHeartbeat, RespondActivityTaskCompleted …)",
  labelNames: ['role', 'method'] as const,
  registers,
});

export const gatewayOpenCalls = new Gauge({
  name: 'ironflow_gateway_open_calls',
  help: "Agents' calls open through the agent gateway (each agent's long polls among them), by the agent's role",
  labelNames: ['role'] as const,
  registers,
});

export const bootLeaseChanges = new Counter({
  name: 'ironflow_boot_lease_changes_total',
  help: 'Boot lease changes of sites (acquired, renewed, transferred, expired…)',
  labelNames: ['change'] as const,
  registers,
});

export const agentHeartbeats = new Counter({
  name: 'ironflow_agent_heartbeats_total',
  help: "Agents' session heartbeats the control plane recorded, by the agent's role: a fleet's steady load (each is a signed request and a write)",
  labelNames: ['role'] as const,
  registers,
});

export const agentSessions = new Gauge({
  name: 'ironflow_agent_sessions',
  help: 'Agent sessions by role and site, and whether the agent was seen within its heartbeat window (read from the database at each scrape)',
  labelNames: ['role', 'site', 'connected'] as const,
  registers: [scrapedRegistry],
});

export const bootSlots = new Gauge({
  name: 'ironflow_boot_slots',
  help: "Provision runs holding one of their site's boot slots, or queued for one, by site (read from the database at each scrape)",
  labelNames: ['site', 'state'] as const,
  registers: [scrapedRegistry],
});

/** What ended an activity attempt: a result, an error (retried or not), or a cancellation. */
export type AttemptOutcome = 'completed' | 'failed' | 'canceled';

export const controlActivitySeconds = new Histogram({
  name: 'ironflow_control_activity_duration_seconds',
  help: "Activity attempts the control-plane worker ran (control steps by their `use`, and the workflows' own activities), by activity and outcome",
  labelNames: ['activity', 'outcome'] as const,
  buckets: [0.005, 0.02, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
  registers,
});

export const workflowSeconds = new Histogram({
  name: 'ironflow_workflow_duration_seconds',
  help: 'Workflow runs the control-plane worker ended, from the run start, by workflow type, the provision state a provision run served, and outcome',
  labelNames: ['workflow', 'state', 'outcome'] as const,
  buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800, 3600, 4 * 3600],
  registers,
});

export const stateOutcomes = new Counter({
  name: 'ironflow_state_outcomes_total',
  help: "Ends of nodes' state workflows the lifecycle applied, by provision state and the move it made (complete or fail)",
  labelNames: ['state', 'move'] as const,
  registers,
});
