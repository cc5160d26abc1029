// A fleet of emulated machines in one process: one Redfish BMC host (one socket) for all
// their BMCs and a Machine per machine (a few fields and a sparse disk file). Each
// machine's ramdisk agent dials the agent gateway with its own certificate, as a real one does. The BMC host's power and boot events
// drive each machine's firmware.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { AgentLog } from '../common/log';
import { Machine, type InstalledOsHook, type MachineDescription } from './machine';
import { RedfishBmcHost } from './redfish-bmc';

interface FleetOptions {
  dataDir: string;
  /** The site agent's boot server URL (what DHCP would point iPXE at). */
  bootServerUrl: () => string | undefined;
  installedOs?: InstalledOsHook;
  /** CA certificates the machines' ramdisks trust for image sources. */
  ramdiskTrustedCaPems?: string[];
  sleepScale?: number;
  log?: AgentLog;
  bmcHost?: string;
}

interface NewMachine {
  id?: string;
  macs?: string[];
  arch?: MachineDescription['arch'];
  uefi?: boolean;
  diskBytes?: number;
  disk?: MachineDescription['disk'];
  gpus?: number;
  failingDcgmTests?: string[];
  /** false: the BMC names no NICs (as IPMI cannot), so only PXE discovery learns the MAC. */
  bmcReportsMacs?: boolean;
  firmwareUuid?: MachineDescription['firmwareUuid'];
}

/** A locally administered unicast MAC (02:…), unique enough for a fleet. */
export const randomMac = (): string => ['02', ...Array.from(randomBytes(5), (b) => b.toString(16).padStart(2, '0'))].join(':');

export class Fleet {
  readonly machines = new Map<string, Machine>();
  private sequence = 0;

  private constructor(
    readonly bmc: RedfishBmcHost,
    private readonly options: FleetOptions,
  ) {
    bmc.on('power', (event) => {
      if (event.state === 'off') void this.machines.get(event.machineId)?.powerOff();
    });
    bmc.on('boot', (event) => void this.machines.get(event.machineId)?.boot(event.device));
  }

  static async start(options: FleetOptions): Promise<Fleet> {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const bmc = await RedfishBmcHost.start({ host: options.bmcHost ?? '127.0.0.1' });
    return new Fleet(bmc, options);
  }

  /** Adds a machine (powered off, empty disk) with its BMC credentials. */
  async add(spec: NewMachine = {}): Promise<{ machine: Machine; bmc: { address: string; username: string; password: string } }> {
    this.sequence += 1;
    const id = spec.id ?? `m${String(this.sequence).padStart(4, '0')}`;
    const macs = spec.macs ?? [randomMac()];
    const description: MachineDescription = {
      id,
      uuid: randomUUID(),
      macs,
      ips: macs.map((_, i) => `10.${(this.sequence >> 8) & 255}.${this.sequence & 255}.${10 + i}`),
      arch: spec.arch ?? 'x86_64',
      uefi: spec.uefi ?? true,
      diskBytes: spec.diskBytes ?? 64 * 1024 * 1024,
      gpus: spec.gpus ?? 0,
      ...(spec.failingDcgmTests ? { failingDcgmTests: spec.failingDcgmTests } : {}),
      ...(spec.disk ? { disk: spec.disk } : {}),
      ...(spec.firmwareUuid ? { firmwareUuid: spec.firmwareUuid } : {}),
    };
    const password = randomBytes(12).toString('base64url');
    const bmcNics = spec.bmcReportsMacs === false ? { macs: [], ips: [] } : { macs, ips: description.ips };
    this.bmc.add({ id, uuid: description.uuid, ...bmcNics, username: 'admin', password, powerState: 'Off', defaultBoot: 'disk' });
    const machine = new Machine(description, {
      dataDir: this.options.dataDir,
      bootServerUrl: this.options.bootServerUrl,
      ...(this.options.installedOs ? { installedOs: this.options.installedOs } : {}),
      ...(this.options.ramdiskTrustedCaPems ? { ramdiskTrustedCaPems: this.options.ramdiskTrustedCaPems } : {}),
      ...(this.options.sleepScale !== undefined ? { sleepScale: this.options.sleepScale } : {}),
      log: this.options.log ?? new AgentLog(() => undefined),
    });
    await machine.createDisk();
    this.machines.set(id, machine);
    return { machine, bmc: { address: `${this.bmc.url}/redfish/v1/Systems/${id}`, username: 'admin', password } };
  }

  async close(): Promise<void> {
    await Promise.all([...this.machines.values()].map((m) => m.powerOff()));
    await this.bmc.close();
  }
}
