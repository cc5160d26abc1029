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
import { createProgress } from '../progress';

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

/** How often the machines' boot progress is redrawn while they serve. */
const STATUS_MS = 1000;

/** Machines booted to the ramdisk or their OS (the rest are off, in firmware or without a boot device), of all. */
function machinesReady(fleet: Fleet): { ready: number; total: number; text: string } {
  const byState = new Map<string, number>();
  for (const machine of fleet.machines.values()) byState.set(machine.state, (byState.get(machine.state) ?? 0) + 1);
  const ready = (byState.get('ramdisk') ?? 0) + (byState.get('installed-os') ?? 0);
  const text = ['off', 'firmware', 'ramdisk', 'installed-os', 'no-boot-device'].map((state) => `${state} ${byState.get(state) ?? 0}`).join(' · ');
  return { ready, total: fleet.machines.size, text: `booted · ${text}` };
}

/** Writes the machines' enroll input (0600) and waits for Ctrl-C, drawing how many have booted when `status` tells. */
async function serveUntilInterrupted(
  dataDir: string,
  machines: unknown[],
  banner: string,
  status?: () => { ready: number; total: number; text: string },
): Promise<string> {
  const file = path.join(dataDir, 'emulator', 'machines.json');
  writeFileSync(file, `${JSON.stringify(machines, null, 2)}\n`, { mode: 0o600 });
  process.stderr.write(`${banner}; enroll them from ${file}. Ctrl-C stops.\n`);
  const progress = createProgress();
  const draw = () => {
    if (!status) return;
    const { ready, total, text } = status();
    progress.update(ready, total, text);
  };
  draw();
  const timer = setInterval(draw, STATUS_MS);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  clearInterval(timer);
  progress.end();
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
  const starting = createProgress();
  for (let i = 0; i < input.machines; i++) {
    starting.update(i, input.machines, 'machines started');
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
  starting.update(input.machines, input.machines, 'machines started');
  starting.end();
  const file = await serveUntilInterrupted(
    config.dataDir,
    machines,
    `${input.machines} emulated machines (BMCs at ${fleet.bmc.url}) next to site agent ${agent.identity.current.nodeId}`,
    () => machinesReady(fleet),
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
