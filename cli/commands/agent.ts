// `ironflow agent site --config FILE`: the site agent in the foreground (docs/site-agent.md).
import { z } from 'zod';
import { runSiteAgent } from '../../agent/site/main';
import { defineCommand } from '../command';

export const agentSiteCommand = defineCommand({
  name: 'agent site',
  summary: 'Run the site agent in the foreground: ironflow agent site --config FILE (site token in IRONFLOW_JOIN_TOKEN or token_file)',
  flags: z.object({ config: z.string().min(1) }),
  run: async (_ctx, input) => {
    await runSiteAgent(input.config);
    return undefined;
  },
});
