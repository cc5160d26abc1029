// The DHCP options proxy DHCP reads and writes (RFC 2132, RFC 3004, RFC 4578 and the PXE 2.1
// specification), the client architectures of option 93 we boot, and the options the `dhcp`
// package's table lacks, registered with its addOption so its writer can encode them.
import dhcpOptions from 'dhcp/lib/options.js';
import type { BootArchitecture } from '../../../core/boot/boot-entry';

export const DhcpOption = {
  vendorSpecific: 43,
  messageType: 53,
  serverIdentifier: 54,
  vendorClass: 60,
  tftpServerName: 66,
  bootFileName: 67,
  userClass: 77,
  clientArchitecture: 93,
  clientMachineId: 97,
} as const;

export const DhcpMessageType = { discover: 1, offer: 2, request: 3, ack: 5 } as const;

// Option 97 (RFC 4578): echoed back as the client sent it, a type byte and 16 bytes of UUID.
dhcpOptions.addOption(DhcpOption.clientMachineId, { name: 'Client Machine Identifier', type: 'UInt8s', attr: 'clientMachineId' });

/**
 * Option 43 for a PXE client: PXE_DISCOVERY_CONTROL (sub-option 6) = 8, "boot the file named
 * in this offer" (no menu, no boot server discovery); PXE_MENU_PROMPT (10) with timeout 0 and
 * "PXE", as dnsmasq sends when it has no menu (some PXE ROMs want a prompt); then the end.
 */
export const pxeVendorOptions: readonly number[] = [6, 1, 8, 10, 4, 0, ...Buffer.from('PXE'), 255];

/** RFC 4578 / IANA processor architecture types of the clients we answer. */
const platformByArchitectureType: ReadonlyMap<number, BootArchitecture> = new Map([
  [0, 'BIOS'], // x86 BIOS
  [7, 'X86_64_EFI'], // x64 UEFI (EFI BC), what OVMF sends
  [9, 'X86_64_EFI'], // x64 UEFI
  [11, 'ARM64_EFI'], // arm64 UEFI
  [16, 'X86_64_EFI'], // x64 UEFI HTTP boot
  [19, 'ARM64_EFI'], // arm64 UEFI HTTP boot
]);

const architectureNames: ReadonlyMap<number, string> = new Map([
  [0, 'bios'],
  [6, 'ia32_efi'],
  [7, 'x86_64_efi'],
  [9, 'x86_64_efi'],
  [10, 'arm32_efi'],
  [11, 'arm64_efi'],
  [15, 'ia32_efi_http'],
  [16, 'x86_64_efi_http'],
  [18, 'arm32_efi_http'],
  [19, 'arm64_efi_http'],
]);

/** The iPXE build a client of this architecture type needs, if we boot it. */
export function platformOf(architectureType: number): BootArchitecture | undefined {
  return platformByArchitectureType.get(architectureType);
}

/** A short name for an architecture type (what discovery reports): `x86_64_efi`, `arch-25`. */
export function architectureName(architectureType: number): string {
  return architectureNames.get(architectureType) ?? `arch-${architectureType}`;
}
