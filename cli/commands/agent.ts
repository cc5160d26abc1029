// `ironflow agent site --config FILE` and `ironflow agent ramdisk`: the agents in the foreground (docs/site-agent.md).
import { z } from 'zod';
import { runRamdiskOnMachine } from '../../agent/ramdisk/machine-main';
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

export const agentRamdiskCommand = defineCommand({
  name: 'agent ramdisk',
  summary: 'Run the ramdisk agent on this machine: ironflow agent ramdisk [--cmdline FILE] (boot parameters from /proc/cmdline, hardware from sysfs)',
  flags: z.object({ cmdline: z.string().min(1).optional() }),
  run: async (_ctx, input) => {
    await runRamdiskOnMachine(input.cmdline ? { cmdlineFile: input.cmdline } : {});
    return undefined;
  },
});
