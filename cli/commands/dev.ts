// `ironflow dev emulate --machines N --site S --config FILE`: a site without hardware. Runs
// the site agent of FILE (joined to site S) and N emulated machines next to it: Redfish BMCs
// on one local port, machines that PXE-boot from the agent's boot server into real ramdisk
// agents. Their BMC addresses, credentials, MACs and UUIDs go to a 0600 file (enroll input),
// never to the terminal. With --qemu (root only) the machines are QEMU VMs with real firmware
// on a network of namespaces, the agent running in one of them (agent/emulator/qemu-site.ts).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { Fleet } from '../../agent/emulator/fleet';
import { nodeAgentOs } from '../../agent/emulator/installed-os';
import { requireQemuSite, startQemuSite } from '../../agent/emulator/qemu-site';
import { loadSiteAgentConfig, type SiteAgentConfig } from '../../agent/site/config';
import { ensureDataDir, loadIdentity, loadOrCreateKey } from '../../agent/common/identity';
import { startSiteAgent } from '../../agent/site/main';
import { IronflowError } from '../../core/errors';
import { defineCommand } from '../command';

const flags = z.object({
  machines: z.coerce.number().int().min(1).max(2000),
  siteId: z.string().min(1),
  config: z.string().min(1),
  diskMib: z.coerce.number().int().min(1).max(65_536).default(64),
  /** QEMU machines (root): real firmware, the real ramdisk, on a namespace network. */
  qemu: z.boolean().default(false),
  firmware: z.enum(['bios', 'uefi']).default('bios'),
  /** The Temporal frontend port relayed to a QEMU site's agent and machines; default: the joined agent's. */
  gatewayPort: z.coerce.number().int().min(1).max(65_535).optional(),
});
type Flags = z.infer<typeof flags>;

const wrongSite = (input: Flags, siteId: string | null) =>
  new IronflowError('INVALID_INPUT', `the agent of ${input.config} belongs to site ${siteId}, not ${input.siteId}`, { path: 'site' });

/** Writes the machines' enroll input (0600) and waits for Ctrl-C. */
async function serveUntilInterrupted(dataDir: string, machines: unknown[], banner: string): Promise<string> {
  const file = path.join(dataDir, 'emulator', 'machines.json');
  writeFileSync(file, `${JSON.stringify(machines, null, 2)}\n`, { mode: 0o600 });
  process.stderr.write(`${banner}; enroll them from ${file}. Ctrl-C stops.\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  return file;
}

async function emulateInProcess(config: SiteAgentConfig, input: Flags) {
  const agent = await startSiteAgent(config);
  if (agent.identity.current.siteId !== input.siteId) {
    await agent.stop();
    throw wrongSite(input, agent.identity.current.siteId);
  }
  const fleet = await Fleet.start({ dataDir: path.join(config.dataDir, 'emulator'), bootServerUrl: () => agent.bootServer?.url, installedOs: nodeAgentOs() });
  const machines = [];
  for (let i = 0; i < input.machines; i++) {
    const { machine, bmc } = await fleet.add({ diskBytes: input.diskMib * 1024 * 1024 });
    machines.push({
      id: machine.description.id,
      bmcAddress: bmc.address,
      username: bmc.username,
      password: bmc.password,
      macs: machine.description.macs,
      productUuid: machine.description.uuid,
      disk: machine.diskPath,
    });
  }
  const file = await serveUntilInterrupted(
    config.dataDir,
    machines,
    `${input.machines} emulated machines (BMCs at ${fleet.bmc.url}) next to site agent ${agent.identity.current.nodeId}`,
  );
  await fleet.close();
  await agent.stop();
  return file;
}

async function emulateOnQemu(config: SiteAgentConfig, input: Flags) {
  requireQemuSite(input.firmware);
  ensureDataDir(config.dataDir);
  const identity = loadIdentity(config.dataDir, loadOrCreateKey(config.dataDir))?.current;
  if (identity && identity.siteId !== input.siteId) throw wrongSite(input, identity.siteId);
  const gatewayPort = input.gatewayPort ?? Number(identity?.temporal.address.split(':').pop());
  if (!Number.isInteger(gatewayPort) || gatewayPort <= 0)
    throw new IronflowError('INVALID_INPUT', "the site agent has not joined yet: pass --gateway-port (the control plane's agent gateway port)", {
      path: 'gatewayPort',
    });
  const site = await startQemuSite({
    dir: path.join(config.dataDir, 'emulator', 'qemu'),
    controlPlaneUrl: config.controlPlaneUrl,
    controlPlaneCaPems: config.controlPlaneCaPems,
    agentDataDir: config.dataDir,
    ...(config.tokenFile ? { tokenFile: config.tokenFile } : {}),
    gatewayPort,
  });
  const machines = [];
  for (let i = 0; i < input.machines; i++) {
    const machine = site.addMachine({ firmware: input.firmware, diskBytes: input.diskMib * 1024 * 1024 });
    machines.push({
      id: machine.id,
      bmcAddress: machine.bmc.address,
      username: machine.bmc.username,
      password: machine.bmc.password,
      macs: [machine.mac],
      productUuid: machine.productUuid,
      disk: machine.disk,
      serialLogs: machine.serialLogs,
    });
    process.stderr.write(`${machine.id}: BMC ${machine.bmc.address}, serial logs ${machine.serialLogs}\n`);
  }
  const banner = `${input.machines} QEMU machines (${input.firmware}) next to the site agent in a network namespace (its log: ${site.agentLogFile}); they reach the control plane at ${site.machineFacingHost} (start it with api.tls naming ${site.machineFacingHost}, IRONFLOW_API_URL=https://${site.machineFacingHost}:<api port> and IRONFLOW_AGENT_GATEWAY_ADDRESS=${site.machineFacingHost}:${gatewayPort})`;
  try {
    return await serveUntilInterrupted(config.dataDir, machines, banner);
  } finally {
    await site.close();
  }
}

export const devEmulateCommand = defineCommand({
  name: 'dev emulate',
  summary:
    'Run N emulated machines (Redfish BMC, PXE firmware, ramdisk) next to a site agent: ironflow dev emulate --machines 3 --site site_… --config site-agent.toml [--qemu [--firmware bios|uefi]] (--qemu: QEMU VMs, root)',
  flags,
  run: async (_ctx, input) => {
    const config = loadSiteAgentConfig(input.config);
    if (!input.qemu && !config.boot)
      throw new IronflowError('INVALID_CONFIG', `${input.config} has no [boot] section: the emulated machines boot from the agent's boot server`, {
        path: 'boot',
      });
    const file = input.qemu ? await emulateOnQemu(config, input) : await emulateInProcess(config, input);
    return { machines: input.machines, file };
  },
});
