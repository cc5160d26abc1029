// `GET /v1/metal/nodes/:id/status`: what step a machine is on and why it waits or failed, in
// one answer (the same facts the Temporal Web UI shows on the workflow), for the API, the
// CLI and OpenAPI.
import { z } from 'zod';

const agentSchema = z.object({
  agentNodeId: z.string(),
  taskQueue: z.string(),
  connected: z.boolean(),
  lastSeenAt: z.string(),
});

export const metalStatusSchema = z.object({
  nodeId: z.string(),
  siteId: z.string(),
  state: z.string().nullable(),
  provisionPhase: z.string().nullable(),
  power: z.string().nullable(),
  maintenance: z.boolean(),
  /** Why (an operator's reason, or the failure that set it); null when maintenance is off. */
  maintenanceReason: z.string().nullable(),
  /** The state's workflow as Temporal describes it; null when the node rests. */
  workflow: z
    .object({
      workflowId: z.string(),
      runId: z.string(),
      /** RUNNING, COMPLETED, FAILED, … */
      runStatus: z.string(),
      /** The provision workflow's phase (steps, acceptance, cleanup, …), when its worker answered. */
      phase: z.string().nullable(),
      /** The run's page in the Temporal Web UI (its history; `/user-metadata` has the summary and current details). */
      webUiPath: z.string(),
    })
    .nullable(),
  step: z
    .object({
      key: z.string(),
      use: z.string(),
      /** The workflow's attempt at the step (a site step counts each agent it was sent to). */
      attempt: z.number(),
      /** Temporal's attempt of the running activity, when one is scheduled. */
      activityAttempt: z.number().nullable(),
      taskQueue: z.string().nullable(),
      startedAt: z.string(),
      /** The running activity's last failed attempt, if it was retried. */
      lastFailure: z.string().nullable(),
      progress: z.unknown().nullable(),
    })
    .nullable(),
  waitingFor: z.string().nullable(),
  /** The error class of the node's last failure. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  failedFrom: z.string().nullable(),
  /**
   * Where to read what the machine printed. The control plane stores no console or ramdisk
   * log: it names the agents that have them and the event log's filter.
   */
  logs: z.object({
    /** The machine's own agent, if one joined: its ramdisk or installed OS (either logs to the machine's console). */
    machineAgent: agentSchema.extend({ role: z.string() }).nullable(),
    /** The site's agents: their logs have the boot server's view of the machine (DHCP, TFTP, iPXE). */
    siteAgents: z.array(agentSchema),
    /** The machine's console is reached through its BMC. */
    bmc: z.object({ driver: z.string().nullable(), address: z.string().nullable() }),
    events: z.object({ subjectId: z.string(), command: z.string() }),
  }),
});
export type MetalStatusView = z.infer<typeof metalStatusSchema>;
