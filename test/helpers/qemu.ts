// Real firmware for boot tests: a QEMU machine (TCG: KVM does not work on these machines)
// with one virtio NIC on a tap of a test network (test/helpers/netns.ts), booting from the
// network. 'bios' is SeaBIOS with the iPXE option ROM from Debian's ipxe-qemu; 'uefi' is
// OVMF (Debian's ovmf), whose PXE client fetches an iPXE build over TFTP. The serial console
// goes to a file the test reads; waitForSerial fails with the log's tail.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestNetwork } from './netns';

export type Firmware = 'bios' | 'uefi';

const QEMU = 'qemu-system-x86_64';
const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';
/** The virtio NIC's option ROM (legacy PXE and EFI in one), which QEMU loads by default. */
const VIRTIO_ROM = '/usr/lib/ipxe/qemu/efi-virtio.rom';
const UEFI_IPXE = '/usr/lib/ipxe/snponly.efi';

/** Fails with the apt-get command when QEMU, OVMF, the iPXE ROMs or the iPXE builds are missing. */
export function requireQemu(firmware: Firmware[]): void {
  const missing: string[] = [];
  try {
    execFileSync(QEMU, ['--version'], { stdio: 'ignore' });
  } catch {
    missing.push('qemu-system-x86');
  }
  if (!existsSync(VIRTIO_ROM)) missing.push('ipxe-qemu');
  if (firmware.includes('uefi') && !(existsSync(OVMF_CODE) && existsSync(OVMF_VARS))) missing.push('ovmf');
  // What UEFI PXE fetches over TFTP from the agent's tftp_root (Debian's default, /usr/lib/ipxe).
  if (firmware.includes('uefi') && !existsSync(UEFI_IPXE)) missing.push('ipxe');
  if (missing.length > 0) throw new Error(`QEMU boot tests need ${missing.join(', ')}: apt-get install -y ${missing.join(' ')} (or bash scripts/test-deps.sh)`);
}

export interface QemuMachineOptions {
  network: TestNetwork;
  firmware: Firmware;
  mac: string;
  /** The SMBIOS system UUID (what iPXE's ${uuid} reads). */
  uuid: string;
  /** Where the serial log and the UEFI variable store go. */
  dir: string;
  name: string;
  memoryMb?: number;
}

export interface QemuMachine {
  name: string;
  mac: string;
  uuid: string;
  firmware: Firmware;
  serialLog: string;
  child: ChildProcess;
  startedAt: number;
  /** The serial console so far. */
  serial(): string;
  /** Resolves with the serial log once `marker` appears in it; rejects with its tail on timeout or exit. */
  waitForSerial(marker: string | RegExp, timeoutMs: number): Promise<string>;
  /** Resolves when QEMU exited (a poweroff in the guest ends it). */
  exited: Promise<number | null>;
  kill(): Promise<void>;
}

export function startQemuMachine(options: QemuMachineOptions): QemuMachine {
  const { network, firmware, mac, uuid, dir, name } = options;
  const tap = network.addTap();
  const serialLog = path.join(dir, `${name}.serial.log`);
  const seabiosLog = path.join(dir, `${name}.seabios.log`);
  writeFileSync(serialLog, '');
  const machine =
    firmware === 'uefi'
      ? (() => {
          const vars = path.join(dir, `${name}.OVMF_VARS.fd`);
          copyFileSync(OVMF_VARS, vars);
          return ['-machine', 'q35,accel=tcg', '-drive', `if=pflash,format=raw,readonly=on,file=${OVMF_CODE}`, '-drive', `if=pflash,format=raw,file=${vars}`];
        })()
      : // SeaBIOS prints to VGA; its debug port (0x402) says which device it booted and why not.
        ['-machine', 'pc,accel=tcg', '-boot', 'n', '-chardev', `file,id=seabios,path=${seabiosLog}`, '-device', 'isa-debugcon,iobase=0x402,chardev=seabios'];
  const args = [
    ...machine,
    '-m',
    String(options.memoryMb ?? 512),
    '-uuid',
    uuid,
    '-display',
    'none',
    '-monitor',
    'none',
    '-serial',
    `file:${serialLog}`,
    '-netdev',
    `tap,id=n0,ifname=${tap},script=no,downscript=no`,
    // bootindex: OVMF ignores -boot n; the NIC first makes it PXE-boot. disable-legacy: the
    // ROM's PCI header names the modern virtio-net (1af4:1041), and SeaBIOS runs a ROM only on
    // the device it names. UEFI gets no ROM: OVMF's own virtio driver and PXE client (as a
    // server's vendor firmware has), not iPXE's, so the boot goes PXE → TFTP → iPXE.
    '-device',
    `virtio-net-pci,netdev=n0,mac=${mac},bootindex=1,disable-legacy=on,romfile=${firmware === 'bios' ? VIRTIO_ROM : ''}`,
    '-name',
    name,
  ];
  const child = network.spawnIn(network.switchNs, QEMU, args);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  child.stdout?.resume(); // nothing expected there, but a full pipe would stall the machine
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const serial = () => readFileSync(serialLog, 'latin1');
  const tail = () => {
    const console = serial().slice(-1500).replace(/\r/g, '');
    // SeaBIOS and its iPXE ROM print to VGA: what SeaBIOS booted (or why not) is in its debug log.
    const bios = firmware === 'bios' && existsSync(seabiosLog) ? `\nSeaBIOS debug log tail:\n${readFileSync(seabiosLog, 'latin1').slice(-800)}` : '';
    return `${console}${bios}`;
  };

  return {
    name,
    mac,
    uuid,
    firmware,
    serialLog,
    child,
    startedAt: Date.now(),
    serial,
    exited,
    async waitForSerial(marker, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const found = () => (typeof marker === 'string' ? serial().includes(marker) : marker.test(serial()));
      for (;;) {
        if (found()) return serial();
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`${name} (${firmware}) exited (${child.exitCode ?? child.signalCode}) before printing ${String(marker)}; qemu stderr: ${stderr.trim() || '(none)'}; serial log tail:\n${tail()}`);
        }
        if (Date.now() > deadline) throw new Error(`${name} (${firmware}) did not print ${String(marker)} within ${timeoutMs} ms; serial log tail:\n${tail()}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
