// `ironflow dev emulate --machines N --site S --config FILE`: a site without hardware. Runs
// the site agent of FILE (joined to site S) and N emulated machines next to it: Redfish BMCs
// on one local port, machines that PXE-boot from the agent's boot server into real ramdisk
// agents. Their BMC addresses, credentials, MACs and UUIDs go to a 0600 file (enroll input),
// never to the terminal.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { Fleet } from '../../agent/emulator/fleet';
import { nodeAgentOs } from '../../agent/emulator/installed-os';
import { loadSiteAgentConfig } from '../../agent/site/config';
import { startSiteAgent } from '../../agent/site/main';
import { IronflowError } from '../../core/errors';
import { defineCommand } from '../command';

export const devEmulateCommand = defineCommand({
  name: 'dev emulate',
  summary: 'Run N emulated machines (Redfish BMC, PXE firmware, ramdisk) next to a site agent: ironflow dev emulate --machines 3 --site site_… --config site-agent.toml',
  flags: z.object({
    machines: z.coerce.number().int().min(1).max(2000),
    siteId: z.string().min(1),
    config: z.string().min(1),
    diskMib: z.coerce.number().int().min(1).max(65_536).default(64),
  }),
  run: async (_ctx, input) => {
    const config = loadSiteAgentConfig(input.config);
    if (!config.boot) throw new IronflowError('INVALID_CONFIG', `${input.config} has no [boot] section: the emulated machines boot from the agent's boot server`, { path: 'boot' });
    const agent = await startSiteAgent(config);
    if (agent.identity.current.siteId !== input.siteId) {
      await agent.stop();
      throw new IronflowError('INVALID_INPUT', `the agent of ${input.config} belongs to site ${agent.identity.current.siteId}, not ${input.siteId}`, { path: 'site' });
    }
    const fleet = await Fleet.start({ dataDir: path.join(config.dataDir, 'emulator'), bootServerUrl: () => agent.bootServer?.url, temporalAddress: agent.identity.current.temporal.address, installedOs: nodeAgentOs() });
    const machines = [];
    for (let i = 0; i < input.machines; i++) {
      const { machine, bmc } = await fleet.add({ diskBytes: input.diskMib * 1024 * 1024 });
      machines.push({ id: machine.description.id, bmcAddress: bmc.address, username: bmc.username, password: bmc.password, macs: machine.description.macs, productUuid: machine.description.uuid, disk: machine.diskPath });
    }
    const file = path.join(config.dataDir, 'emulator', 'machines.json');
    writeFileSync(file, `${JSON.stringify(machines, null, 2)}\n`, { mode: 0o600 });
    process.stderr.write(`${input.machines} emulated machines (BMCs at ${fleet.bmc.url}) next to site agent ${agent.identity.current.nodeId}; enroll them from ${file}. Ctrl-C stops.\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await fleet.close();
    await agent.stop();
    return { machines: input.machines, file };
  },
});
