// Real firmware for boot tests: QEMU machines (agent/emulator/qemu-machine.ts, TCG: KVM does
// not work on these machines) with one virtio NIC on a tap of a test network
// (test/helpers/netns.ts), QEMU running in the network's switch namespace. 'uefi' machines'
// OVMF PXE client fetches an iPXE build over TFTP, so those tests need Debian's ipxe too.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  OVMF_CODE,
  OVMF_VARS,
  QEMU_BINARY,
  QemuMachine,
  VIRTIO_ROM,
  type QemuBoot,
  type QemuFirmware,
  type QemuMachineSpec,
} from '../../agent/emulator/qemu-machine';
import type { TestNetwork } from './netns';

export type Firmware = QemuFirmware;

const UEFI_IPXE = '/usr/lib/ipxe/snponly.efi';

/** Fails with the apt-get command when QEMU, OVMF, the iPXE ROMs or the iPXE builds are missing. */
export function requireQemu(firmware: Firmware[]): void {
  const missing: string[] = [];
  try {
    execFileSync(QEMU_BINARY, ['--version'], { stdio: 'ignore' });
  } catch {
    missing.push('qemu-system-x86');
  }
  if (!existsSync(VIRTIO_ROM)) missing.push('ipxe-qemu');
  if (firmware.includes('uefi') && !(existsSync(OVMF_CODE) && existsSync(OVMF_VARS))) missing.push('ovmf');
  // What UEFI PXE fetches over TFTP from the agent's tftp_root (Debian's default, /usr/lib/ipxe).
  if (firmware.includes('uefi') && !existsSync(UEFI_IPXE)) missing.push('ipxe');
  if (missing.length > 0) throw new Error(`QEMU boot tests need ${missing.join(', ')}: apt-get install -y ${missing.join(' ')} (or bash scripts/test-deps.sh)`);
}

export interface TestQemuMachineOptions {
  network: TestNetwork;
  firmware: Firmware;
  mac: string;
  uuid: string;
  /** Where the machine's files (serial logs, UEFI variables, QMP socket, disk) go. */
  dir: string;
  name: string;
  /** A raw disk file of this size (none when absent). */
  diskBytes?: number;
  memoryMb?: number;
}

/** The QEMU machine spec for a machine on a new tap of the test network. */
export function qemuSpecOn(options: TestQemuMachineOptions): QemuMachineSpec {
  return {
    id: options.name,
    firmware: options.firmware,
    uuid: options.uuid,
    mac: options.mac,
    ...options.network.tapNic(),
    dir: options.dir,
    ...(options.diskBytes ? { diskPath: `${options.dir}/${options.name}.disk`, diskBytes: options.diskBytes } : {}),
    ...(options.memoryMb ? { memoryMb: options.memoryMb } : {}),
  };
}

/** A machine without a BMC, powered on to the network at once. */
export async function startQemuMachine(options: TestQemuMachineOptions): Promise<{ machine: QemuMachine; boot: QemuBoot }> {
  const machine = new QemuMachine(qemuSpecOn(options));
  return { machine, boot: await machine.powerOn('pxe') };
}
