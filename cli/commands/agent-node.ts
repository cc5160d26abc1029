// `ironflow agent join …` and `ironflow agent node …`: the installed OS's agent
// (docs/lifecycle.md "The installed OS"). Their argv is core/userdata/agent-argv.ts's,
// which the shipped cloud-init and Ignition templates run.
import { z } from 'zod';
import { joinNodeAgent, runNodeAgent } from '../../agent/node/main';
import { listenAddressSchema } from '../../core/schemas/common';
import { pinSchema } from '../../core/userdata/values';
import { defineCommand } from '../command';

const joinFlags = {
  server: z.string().url().optional(),
  /** The key pin of the API's CA: an https server must chain to it (agent/node/join.ts). */
  servingCaPin: pinSchema.optional(),
  tokenFile: z.string().min(1).optional(),
  nodeId: z.string().min(1).max(64).optional(),
  dataDir: z.string().min(1).optional(),
};

export const agentJoinCommand = defineCommand({
  name: 'agent join',
  summary:
    'Join the installed OS as its node: ironflow agent join --server URL --token-file FILE --node-id ID [--data-dir D] (removes the token file once joined)',
  flags: z.object({
    ...joinFlags,
    // Accepted as the user data passes them; see docs/lifecycle.md for which are checked today.
    joinSigningPin: pinSchema.optional(),
    joinEncryptionPin: pinSchema.optional(),
  }),
  run: async (_ctx, input) => joinNodeAgent(input),
});

export const agentNodeCommand = defineCommand({
  name: 'agent node',
  summary:
    'Run the node agent in the foreground: ironflow agent node [--data-dir D] [--metrics-address HOST:PORT] [--server URL --token-file FILE --node-id ID to join first; no --node-id with a pool adopt token]',
  flags: z.object({
    ...joinFlags,
    /** Where the Temporal SDK exports the agent's worker metrics (GET /metrics, docs/metrics.md); none when unset. */
    metricsAddress: listenAddressSchema.optional(),
  }),
  run: async (_ctx, input) => {
    await runNodeAgent(input);
    return undefined;
  },
});
