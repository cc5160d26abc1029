// POST /v1/agents/proxy-targets: the addresses site.httpProxy may reach for a machine
// (the request is the same { nodeId, workflowId } as BMC access).
import { z } from 'zod';

export const proxyTargetsAnswerSchema = z.object({
  /** The machine's own IP addresses, from its inspection. */
  addresses: z.array(z.string()),
  /** Its BMC's host, which the proxy refuses whatever else says. */
  bmcHost: z.string().nullable(),
});
export type ProxyTargets = z.infer<typeof proxyTargetsAnswerSchema>;
