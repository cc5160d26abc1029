// An emulated machine: its BMC lives in a RedfishBmcHost (agent/emulator/redfish-bmc.ts);
// this is its firmware and what it boots. Powered on to PXE it does what firmware plus iPXE
// do after DHCP: GET the site agent's /boot/chain.ipxe, follow it to /boot/ipxe with its
// MAC, SMBIOS UUID and IP, and act on the script: `exit` (no entry: next boot device),
// `sleep; reboot` (boot server not active), `sleep; chain` (wait), or kernel+initrd, whose
// `if.*` arguments start a REAL ramdisk-mode agent in this process with a file as its disk.
// Booted from disk with an image on it, it starts the "installed OS" through a hook (the
// node-mode agent: agent/emulator/installed-os.ts). State is a few fields and a disk file per machine.
import { open, rm, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseRamdiskScript } from '../boot/ipxe/script';
import { bootParamsFrom } from '../ramdisk/boot-params';
import type { EmulatedDcgmReport } from '../common/dcgm';
import type { RamdiskHardware } from '../ramdisk/hardware';
import { startRamdiskAgent, type RamdiskAgent } from '../ramdisk/main';
import { AgentLog } from '../common/log';
import { DEFAULT_EMULATED_DISK, EmulatedDisk, type EmulatedDiskSpec } from './emulated-disk';
import type { EmulatedBootDevice } from './redfish-bmc';

export interface MachineDescription {
  /** The Redfish system id. */
  id: string;
  uuid: string;
  macs: string[];
  ips: string[];
  arch: 'x86_64' | 'aarch64';
  uefi: boolean;
  diskBytes: number;
  /** The drive: its transport and the erase modes its firmware offers (agent/emulator/emulated-disk.ts); DEFAULT_EMULATED_DISK when absent. */
  disk?: EmulatedDiskSpec;
  gpus: number;
  /** DCGM tests that fail on this machine (none by default). */
  failingDcgmTests?: string[];
  /** A host that lies on the wire once: its first network boot sends this UUID instead of its own (later boots and its ramdisk tell the truth). */
  firmwareUuid?: string;
}

type MachineState = 'off' | 'firmware' | 'ramdisk' | 'installed-os' | 'no-boot-device';

/** What the installed OS does when the machine boots from a disk with an image on it. */
export type InstalledOsHook = (machine: Machine) => Promise<{ stop(): Promise<void> } | undefined>;

interface MachineOptions {
  /** Where disk files live. */
  dataDir: string;
  /** The site agent's boot server, as DHCP would name it (next-server / boot file URL). */
  bootServerUrl: () => string | undefined;
  installedOs?: InstalledOsHook;
  /** CA certificates the ramdisk trusts for image sources (a site's own CA baked into its ramdisk). */
  ramdiskTrustedCaPems?: string[];
  /** Scales the scripts' sleeps (tests use less than 1). */
  sleepScale?: number;
  log?: AgentLog;
}

const MAX_SCRIPT_BYTES = 64 * 1024;
const MAX_CHAINS = 50;
/** A server's boot-sequence retry delay (scaled by sleepScale). */
const BOOT_RETRY_SECONDS = 30;

export class Machine {
  state: MachineState = 'off';
  /** A machine whose firmware hangs in POST: powered on, it never boots anything (no PXE request, no disk). */
  hangsInFirmware = false;
  /** The ramdisk agent now running, if any. */
  ramdisk: RamdiskAgent | undefined;
  bootCount = 0;
  /** Network boots so far (a lying firmware lies on the first only). */
  private networkBoots = 0;
  lastError: string | undefined;
  readonly diskPath: string;
  /** The user data a deploy wrote beside the disk (a config drive's stand-in), 0600. */
  readonly userDataPath: string;
  /** The installed OS's own files (its agent's data dir): part of the image, gone with a new one. */
  readonly osDir: string;
  private os: { stop(): Promise<void> } | undefined;
  /** Grows with every power or boot event: an older boot's loop stops when it changes. */
  private generation = 0;
  private readonly log: AgentLog;
  /** The drive behind diskPath, as the ramdisk sees it (sysfs, drive tools). */
  readonly disk: EmulatedDisk;

  constructor(
    readonly description: MachineDescription,
    private readonly options: MachineOptions,
  ) {
    this.diskPath = path.join(options.dataDir, `${description.id}.disk`);
    this.userDataPath = path.join(options.dataDir, `${description.id}.userdata.json`);
    this.osDir = path.join(options.dataDir, `${description.id}.os`);
    this.log = options.log ?? new AgentLog(() => undefined);
    this.disk = new EmulatedDisk(
      description.disk ?? DEFAULT_EMULATED_DISK,
      this.diskPath,
      description.diskBytes,
      path.join(options.dataDir, `${description.id}.sys`),
      async () => {
        // The user data and the OS's files live on the disk: an erase of the drive takes them too.
        await rm(this.userDataPath, { force: true });
        await rm(this.osDir, { recursive: true, force: true });
      },
    );
  }

  /** Creates the disk file (sparse): a fresh machine has an empty disk. */
  async createDisk(): Promise<void> {
    await writeFile(this.diskPath, '', { flag: 'a' });
    await truncate(this.diskPath, this.description.diskBytes);
    this.disk.writeSysfs();
  }

  /** The BMC powered it off. */
  async powerOff(): Promise<void> {
    this.generation += 1;
    this.state = 'off';
    await this.stopSoftware();
  }

  /**
   * The BMC's firmware chose a boot device (after power on or a reset). A boot that failed
   * (no boot server answered, say) is tried again after BOOT_RETRY_SECONDS, as servers'
   * boot-sequence retry does, until the next power or boot event.
   */
  async boot(device: EmulatedBootDevice): Promise<void> {
    const generation = ++this.generation;
    this.bootCount += 1;
    await this.stopSoftware();
    if (this.hangsInFirmware) return void (this.state = 'firmware');
    while (generation === this.generation) {
      try {
        if (device === 'pxe') await this.networkBoot(generation);
        else await this.diskBoot(generation);
        return;
      } catch (error) {
        if (generation !== this.generation) return;
        this.lastError = (error as Error).message;
        this.state = 'no-boot-device';
        this.log.warn('machine boot failed; retrying the boot sequence', { machine: this.description.id, error: this.lastError });
        await this.sleep(BOOT_RETRY_SECONDS);
      }
    }
  }

  /** What the ramdisk sees of this machine. */
  hardware(): RamdiskHardware {
    const d = this.description;
    return {
      system: {
        productUuid: d.uuid,
        vendor: 'Ironflow',
        model: 'Emulated Machine',
        serial: d.id,
        arch: d.arch,
        uefi: d.uefi,
        cpus: 4,
        memoryBytes: 8 * 1024 ** 3,
      },
      nics: d.macs.map((mac, i) => ({ mac, ...(d.ips[i] ? { ip: d.ips[i] } : {}) })),
      disks: [{ name: this.disk.name, path: this.diskPath, sizeBytes: d.diskBytes }],
      sysfsRoot: this.disk.sysfsRoot,
      diskTools: this.disk.tools,
      gpus: Array.from({ length: d.gpus }, (_, i) => ({ model: 'Emulated GPU', uuid: `GPU-${d.uuid.slice(0, 8)}-${i}` })),
      // The emulator's all-pass DCGM (but for failingDcgmTests), marked as emulated: never a real dcgmi run.
      dcgm: async (level): Promise<EmulatedDcgmReport> => ({
        level,
        source: 'emulated',
        tests:
          d.gpus === 0
            ? []
            : ['memory', 'pcie', 'targeted_power', ...(level >= 3 ? ['targeted_stress'] : [])].map((name) => ({
                name,
                passed: !(d.failingDcgmTests ?? []).includes(name),
              })),
      }),
      writeUserData: async (userData) => {
        // A new image was just written: the previous OS's files (its agent identity) are gone.
        await rm(this.osDir, { recursive: true, force: true });
        await writeFile(this.userDataPath, JSON.stringify(userData), { mode: 0o600 });
      },
      loadKexec: async () => ({
        source: 'the emulated disk',
        start: async () => {
          const generation = ++this.generation;
          await this.stopSoftware();
          if (generation === this.generation) await this.diskBoot(generation);
        },
      }),
    };
  }

  private async stopSoftware(): Promise<void> {
    const ramdisk = this.ramdisk;
    const os = this.os;
    this.ramdisk = undefined;
    this.os = undefined;
    await ramdisk?.stop();
    await os?.stop();
  }

  private sleep(seconds: number): Promise<void> {
    return new Promise((r) => setTimeout(r, seconds * 1000 * (this.options.sleepScale ?? 1)));
  }

  private async fetchScript(url: string): Promise<{ status: number; script: string }> {
    const response = await fetch(url, { signal: AbortSignal.timeout(15_000) });
    const script = (await response.text()).slice(0, MAX_SCRIPT_BYTES);
    return { status: response.status, script };
  }

  /** iPXE after DHCP: chain.ipxe, then the scripts it leads to. */
  private async networkBoot(generation: number): Promise<void> {
    this.state = 'firmware';
    this.networkBoots += 1;
    const d = this.description;
    for (;;) {
      const base = this.options.bootServerUrl();
      if (!base) throw new Error('no boot server answered DHCP');
      const chain = await this.fetchScript(`${base}/boot/chain.ipxe`);
      const chainLine = chain.script.split('\n').find((l) => l.startsWith('chain '));
      if (chain.status !== 200 || !chainLine) throw new Error(`chain.ipxe answered ${chain.status}`);
      // iPXE's settings: ${net0/mac}, ${uuid}, ${net0/ip}.
      let url: string | undefined = (chainLine.split(/\s+/)[1] as string)
        .replace('${net0/mac}', d.macs[0] ?? '')
        .replace('${uuid}', this.networkBoots === 1 && d.firmwareUuid ? d.firmwareUuid : d.uuid)
        .replace('${net0/ip}', d.ips[0] ?? '');
      for (let hops = 0; url && hops < MAX_CHAINS; hops++) {
        if (generation !== this.generation) return;
        const { status, script } = await this.fetchScript(url);
        if (generation !== this.generation) return;
        const lines = script.split('\n').map((l) => l.trim());
        const sleepLine = lines.find((l) => l.startsWith('sleep '));
        const seconds = sleepLine ? Number(sleepLine.split(/\s+/)[1]) || 1 : 0;
        if (status === 200 && lines.some((l) => l.startsWith('kernel '))) return this.startRamdisk(generation, script);
        if (lines.includes('exit') || status === 404) {
          // No entry here: the firmware falls through to its next boot device.
          this.log.info('network boot: no boot entry, falling through to disk', { machine: d.id, status });
          return this.diskBoot(generation);
        }
        if (lines.includes('reboot')) {
          await this.sleep(seconds);
          break; // reboot: DHCP and chain.ipxe again
        }
        const next = lines.find((l) => l.startsWith('chain '));
        await this.sleep(seconds);
        url = next?.split(/\s+/)[1];
      }
      if (generation !== this.generation) return;
    }
  }

  private async startRamdisk(generation: number, script: string): Promise<void> {
    const parsed = parseRamdiskScript(script);
    if (!parsed) throw new Error('the boot script has no kernel line');
    const params = bootParamsFrom(parsed.args);
    const agent = await startRamdiskAgent({
      params,
      hardware: this.hardware(),
      ...(this.options.ramdiskTrustedCaPems ? { trustedCaPems: this.options.ramdiskTrustedCaPems } : {}),
      log: this.log,
    });
    if (generation !== this.generation) {
      await agent.stop();
      return;
    }
    this.ramdisk = agent;
    this.state = 'ramdisk';
  }

  /** Boots the disk: the installed OS when the disk holds an image, else nothing to boot. */
  private async diskBoot(generation: number): Promise<void> {
    const handle = await open(this.diskPath, 'r');
    const head = Buffer.alloc(512);
    await handle.read(head, 0, 512, 0).finally(() => handle.close());
    if (head.every((b) => b === 0)) {
      this.state = 'no-boot-device';
      return;
    }
    this.state = 'installed-os';
    const os = await this.options.installedOs?.(this);
    if (generation !== this.generation) await os?.stop();
    else this.os = os;
  }
}
