// POST /v1/agents/bmc-access: a site agent asks for a machine's BMC access for one
// workflow step. The answer holds the password: the agent keeps it in memory for that
// step only; nothing else (events, logs, results) ever carries it.
import { z } from 'zod';
import { bmcDriverNames } from './bmc';
import { idOf } from './common';

/** What a site agent's step request names: the machine, and the running workflow (and run) whose step it is. */
export const stepScope = {
  nodeId: idOf('node'),
  /** The running workflow whose step needs the BMC; it must be this machine's. */
  workflowId: z.string().min(1).max(512),
  /**
   * The step's run of that workflow (its activity's workflowExecution.runId). With it, an
   * answer that this run runs, given up to 2 s before, will do (services/temporal/recent-runs.ts);
   * without it (agents before it) Temporal is asked every time.
   */
  runId: z.string().min(1).max(64).optional(),
};

export const bmcAccessRequestSchema = z.object(stepScope).strict();
export type BmcAccessRequest = z.infer<typeof bmcAccessRequestSchema>;

export const bmcAccessAnswerSchema = z.object({
  driver: z.enum(bmcDriverNames),
  /** Redfish: scheme://host[:port], optionally /redfish/v1/Systems/<id>; IPMI: host[:port]. */
  address: z.string(),
  /** The pinned CA of the BMC's TLS certificate, when the machine has one. */
  caPem: z.string().nullable(),
  username: z.string(),
  password: z.string(),
});
export type BmcAccess = z.infer<typeof bmcAccessAnswerSchema>;

/** What the secret named by a node's bmcCredentialsRef holds. */
export const bmcCredentialsSchema = z.object({ username: z.string().min(1).max(256), password: z.string().min(1).max(1024) });
