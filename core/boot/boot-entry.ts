// A boot entry (spec 001 ProxyDhcpEntry): what metal.ensureRamdisk sends a site agent for
// one PXE MAC, and what the agent's boot server answers that MAC with. It carries only a
// reference to the MAC's discovery token, never the bearer.
import { z } from 'zod';
import { macSchema } from '../schemas/common';

export const bootArchitectures = ['BIOS', 'X86_64_EFI', 'ARM64_EFI'] as const;
export type BootArchitecture = (typeof bootArchitectures)[number];

/** The firmware a machine boots with, from the node's `arch` and `uefi`. */
export function bootArchitectureFor(arch: string | null | undefined, uefi: boolean): BootArchitecture {
  if (arch === 'aarch64' || arch === 'arm64') return 'ARM64_EFI';
  return uefi ? 'X86_64_EFI' : 'BIOS';
}

/** Boot entries last two hours; a discovery token 900 s from when its entry is first sent. */
export const BOOT_ENTRY_TTL_MS = 2 * 3_600_000;
export const DISCOVERY_TOKEN_TTL_SECONDS = 900;

/** SMBIOS UUIDs only in canonical form, lower case. */
export const productUuidSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'a UUID such as 4c4c4544-0042-3510-8052-b4c04f4e3732')
  .transform((v) => v.toLowerCase());

export const bootEntrySchema = z
  .object({
    mac: macSchema,
    productUuid: productUuidSchema.nullable(),
    arch: z.enum(bootArchitectures),
    nodeId: z.string().min(1).max(64),
    workflowId: z.string().min(1).max(256),
    /** The discovery token's secret-store reference (the agent fetches the bearer with it); a ramdisk boot only. */
    tokenRef: z
      .string()
      .regex(/^sec_[A-Za-z0-9]+$/, 'a secret-store reference sec_…')
      .optional(),
    /** Instead of a ramdisk boot: sanboot the cached, verified ISO of this digest (no token, no if.* parameters). */
    sanbootSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'a sha256 digest, 64 lower-case hex characters')
      .optional(),
    notAfter: z.iso.datetime(),
  })
  .strict()
  .refine((entry) => (entry.tokenRef === undefined) !== (entry.sanbootSha256 === undefined), {
    message: 'a boot entry is a ramdisk boot (tokenRef) or a sanboot of a cached ISO (sanbootSha256), exactly one',
    path: ['tokenRef'],
  });
export type BootEntry = z.infer<typeof bootEntrySchema>;
/** An entry that boots the ramdisk (it names its discovery token). */
export type RamdiskBootEntry = BootEntry & { tokenRef: string };

/** boot.prepareRamdisk's input: the entries for one machine (one per known PXE MAC). */
export const prepareRamdiskSchema = z.object({ entries: z.array(bootEntrySchema).min(1).max(16) }).strict();
export type PrepareRamdiskInput = z.infer<typeof prepareRamdiskSchema>;

/** boot.pxeBoot's input: the entries to write first, none for a discovery boot (the site agent lists the machine instead). */
export const pxeBootSchema = z.object({ entries: z.array(bootEntrySchema).max(16) }).strict();
