// A real machine for the emulated BMC: one `qemu-system-x86_64` process per power-on (TCG),
// the role sushy-tools' libvirt driver plays for Ironic. Its SMBIOS UUID and NIC MAC are the
// machine's own, its disk a raw file that outlives power cycles, its UEFI variable store too;
// each power-on's serial console goes to its own log file. The boot order is the BMC's choice
// for this power-on (bootindex: the chosen device first, the others after it, as a server's
// boot sequence falls through). Stopping asks QEMU to quit over QMP (SIGKILL if it does not);
// a guest that powers itself off (poweroff -f) ends the process, which the owner hears.
// 'bios' is SeaBIOS with the iPXE ROM of Debian's ipxe-qemu; 'uefi' is OVMF without a NIC
// ROM, so OVMF's own PXE client runs (as a server's vendor firmware has).
import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EmulatedBootDevice } from './redfish-bmc';
import { QmpClient } from './qemu-qmp';

export type QemuFirmware = 'bios' | 'uefi';

export const QEMU_BINARY = 'qemu-system-x86_64';
export const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
export const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';
/** The virtio NIC's option ROM (legacy PXE and EFI in one), from ipxe-qemu. */
export const VIRTIO_ROM = '/usr/lib/ipxe/qemu/efi-virtio.rom';

/** How QEMU is started: node's spawn, or e.g. a network namespace's (`ip netns exec`, which execs QEMU itself). */
type SpawnQemu = (command: string, args: string[], options: SpawnOptions) => ChildProcess;

export interface QemuMachineSpec {
  /** The machine's name (its files are <dir>/<id>.*). */
  id: string;
  firmware: QemuFirmware;
  /** The SMBIOS system UUID (-uuid). */
  uuid: string;
  mac: string;
  /** The value of `-netdev` for the NIC, with id=n0 (e.g. `tap,id=n0,ifname=tap1,script=no,downscript=no`). */
  netdev: string;
  /** The raw disk file; made (sparse) with diskBytes when missing. No disk when absent. */
  diskPath?: string;
  diskBytes?: number;
  /** Where serial logs, the SeaBIOS debug log, the UEFI variable store and the QMP socket go. */
  dir: string;
  memoryMb?: number;
  spawn?: SpawnQemu;
}

/** One power-on: one QEMU process. */
export interface QemuBoot {
  index: number;
  device: EmulatedBootDevice;
  serialLog: string;
  child: ChildProcess;
  startedAt: number;
  /** Resolves with the exit code once QEMU exited. */
  exited: Promise<number | null>;
  /** The serial console so far. */
  serial(): string;
  /** The console's tail, plus SeaBIOS's debug log (SeaBIOS and the iPXE ROM print to VGA, not serial). */
  tail(): string;
  /** Resolves with the serial log once `marker` appears in it; rejects with its tail on timeout or exit. */
  waitForSerial(marker: string | RegExp, timeoutMs: number): Promise<string>;
}

const QUIT_TIMEOUT_MS = 5_000;

export class QemuMachine {
  readonly boots: QemuBoot[] = [];
  private current: { boot: QemuBoot; qmp: Promise<QmpClient | undefined>; stopping: boolean } | undefined;
  private readonly qmpSocket: string;
  private readonly seabiosLog: string;

  /** onPoweredOff: the guest ended its process itself (poweroff, a crash), not through stop(). */
  constructor(
    readonly spec: QemuMachineSpec,
    private readonly onPoweredOff: (boot: QemuBoot) => void = () => undefined,
  ) {
    this.qmpSocket = path.join(spec.dir, `${spec.id}.qmp`);
    // A unix socket's path is at most 107 bytes: past it QEMU would not start.
    if (Buffer.byteLength(this.qmpSocket) > 107)
      throw new RangeError(`the QMP socket path ${this.qmpSocket} is longer than 107 bytes: use a shorter dir or id`);
    this.seabiosLog = path.join(spec.dir, `${spec.id}.seabios.log`);
    if (spec.diskPath && !existsSync(spec.diskPath)) {
      // Sparse: an empty file grown by truncate, not written zeroes.
      writeFileSync(spec.diskPath, '');
      truncateSync(spec.diskPath, spec.diskBytes ?? 0);
    }
  }

  get running(): boolean {
    return this.current !== undefined;
  }

  /** Powers on (stopping a running process first) with `device` first in the boot order. */
  async powerOn(device: EmulatedBootDevice, cdImage?: string): Promise<QemuBoot> {
    await this.stop();
    const { spec } = this;
    const index = this.boots.length + 1;
    const serialLog = path.join(spec.dir, `${spec.id}.boot${index}.serial.log`);
    writeFileSync(serialLog, '');
    const spawnQemu = spec.spawn ?? nodeSpawn;
    const child = spawnQemu(QEMU_BINARY, this.args(device, serialLog, cdImage), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.stdout?.resume(); // nothing expected there, but a full pipe would stall the machine
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const serial = () => (existsSync(serialLog) ? readFileSync(serialLog, 'latin1') : '');
    const tail = () => {
      const console = serial().slice(-1500).replace(/\r/g, '');
      const bios =
        spec.firmware === 'bios' && existsSync(this.seabiosLog) ? `\nSeaBIOS debug log tail:\n${readFileSync(this.seabiosLog, 'latin1').slice(-800)}` : '';
      return `${console}${bios}`;
    };
    const name = `${spec.id} boot ${index} (${spec.firmware}, ${device})`;
    const boot: QemuBoot = {
      index,
      device,
      serialLog,
      child,
      startedAt: Date.now(),
      exited,
      serial,
      tail,
      async waitForSerial(marker, timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        const found = () => (typeof marker === 'string' ? serial().includes(marker) : marker.test(serial()));
        for (;;) {
          if (found()) return serial();
          if (child.exitCode !== null || child.signalCode !== null) {
            throw new Error(
              `${name} exited (${child.exitCode ?? child.signalCode}) before printing ${String(marker)}; qemu stderr: ${stderr.trim() || '(none)'}; serial log ${serialLog}, tail:\n${tail()}`,
            );
          }
          if (Date.now() > deadline)
            throw new Error(`${name} did not print ${String(marker)} within ${timeoutMs} ms; serial log ${serialLog}, tail:\n${tail()}`);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      },
    };
    this.boots.push(boot);
    const alive = () => child.exitCode === null && child.signalCode === null;
    const current = { boot, qmp: QmpClient.connect(this.qmpSocket, { alive }).catch(() => undefined), stopping: false };
    this.current = current;
    void exited.then(() => {
      if (this.current === current) this.current = undefined;
      if (!current.stopping) this.onPoweredOff(boot);
      void current.qmp.then((qmp) => qmp?.close());
    });
    return boot;
  }

  /** QEMU's run state over QMP ('running', 'paused', …), or 'off' with no process. */
  async status(): Promise<string> {
    const qmp = await this.current?.qmp;
    return qmp ? qmp.status() : 'off';
  }

  /** Powers off: QMP quit, SIGKILL when QEMU does not end in time. */
  async stop(): Promise<void> {
    const current = this.current;
    if (!current) return;
    current.stopping = true;
    const { child, exited } = current.boot;
    if (child.exitCode === null && child.signalCode === null) {
      const qmp = await current.qmp;
      await qmp?.execute('quit').catch(() => undefined);
      const quit = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), QUIT_TIMEOUT_MS))]);
      if (!quit) child.kill('SIGKILL');
    }
    await exited;
    if (this.current === current) this.current = undefined;
  }

  /** QEMU's command line for one power-on. */
  private args(device: EmulatedBootDevice, serialLog: string, cdImage: string | undefined): string[] {
    const { spec } = this;
    // The chosen device first; the rest in a server's usual order after it.
    const order: EmulatedBootDevice[] = [device, ...(['disk', 'pxe'] as const).filter((d) => d !== device)];
    const bootIndex = (d: EmulatedBootDevice) => order.indexOf(d) + 1;
    const firmware =
      spec.firmware === 'uefi'
        ? [
            '-machine',
            'q35,accel=tcg',
            '-drive',
            `if=pflash,format=raw,readonly=on,file=${OVMF_CODE}`,
            '-drive',
            `if=pflash,format=raw,file=${this.uefiVars()}`,
          ]
        : // SeaBIOS prints to VGA; its debug port (0x402) says which device it booted and why not.
          ['-machine', 'pc,accel=tcg', '-chardev', `file,id=seabios,path=${this.seabiosLog}`, '-device', 'isa-debugcon,iobase=0x402,chardev=seabios'];
    const disk = spec.diskPath
      ? ['-drive', `if=none,id=disk0,format=raw,file=${spec.diskPath},discard=unmap`, '-device', `virtio-blk-pci,drive=disk0,bootindex=${bootIndex('disk')}`]
      : [];
    // A virtual CD only when booting one (Redfish virtual media's image: a file, or a URL QEMU's curl driver reads).
    const cd =
      device === 'cd' && cdImage
        ? ['-drive', `if=none,id=cd0,media=cdrom,readonly=on,file=${cdImage}`, '-device', `ide-cd,drive=cd0,bootindex=${bootIndex('cd')}`]
        : [];
    return [
      ...firmware,
      '-m',
      String(spec.memoryMb ?? 512),
      '-uuid',
      spec.uuid,
      '-name',
      spec.id,
      '-display',
      'none',
      // No display adapter: a VGA is a PCI display controller (class 0x03), which the ramdisk
      // would count as a GPU for DCGM. The console is the serial port.
      '-vga',
      'none',
      '-monitor',
      'none',
      '-qmp',
      `unix:${this.qmpSocket},server=on,wait=off`,
      '-serial',
      `file:${serialLog}`,
      '-netdev',
      spec.netdev,
      // disable-legacy: the ROM's PCI header names the modern virtio-net (1af4:1041), and
      // SeaBIOS runs a ROM only on the device it names. UEFI gets no ROM (OVMF's own PXE).
      '-device',
      `virtio-net-pci,netdev=n0,mac=${spec.mac},bootindex=${bootIndex('pxe')},disable-legacy=on,romfile=${spec.firmware === 'bios' ? VIRTIO_ROM : ''}`,
      ...disk,
      ...cd,
    ];
  }

  /** The machine's own UEFI variable store (its NVRAM), made from OVMF's template once. */
  private uefiVars(): string {
    const vars = path.join(this.spec.dir, `${this.spec.id}.OVMF_VARS.fd`);
    if (!existsSync(vars)) copyFileSync(OVMF_VARS, vars);
    return vars;
  }
}
