// What a drive can do to erase itself, decided from what it says about itself: NVMe from
// `nvme id-ctrl --output-format=json` (OACS bit 1: Format NVM; FNA bit 2: cryptographic erase
// within Format; SANICAP: the Sanitize actions), ATA from `hdparm -I` (the Security section:
// supported, frozen, locked, the erase time estimates; the SANITIZE feature set and its
// CRYPTO_SCRAMBLE_EXT command). Pure functions over the tools' text, so captured output of
// real drives is their test (test/unit/erase-capabilities.test.ts).
import { z } from 'zod';

export type DeviceEraseMode = 'secure-erase' | 'crypto-erase';
export type DiskToolName = 'nvme' | 'hdparm' | 'blkdiscard';

interface ToolCommand {
  command: DiskToolName;
  args: string[];
}

/** The commands that erase a drive in one mode, and how long they may take. */
export interface EraseProcedure {
  /** Run in order; the last one is the erase itself. */
  commands: ToolCommand[];
  /** ATA Sanitize runs in the background: poll `hdparm --sanitize-status` until it is done. */
  pollSanitize?: boolean;
  /** The bound on the whole erase (the drive's own estimate where it gives one). */
  timeoutMs: number;
}

export type EraseDecision = { procedure: EraseProcedure } | { unsupported: string };

const MINUTE = 60_000;
/** NVMe Format and ATA Sanitize crypto scramble finish in seconds to minutes on real drives; this bounds a hung one. */
const FORMAT_TIMEOUT_MS = 60 * MINUTE;
/** The password ATA Security Erase needs set first; the erase clears it again. Not a secret: it protects nothing after the erase. */
export const ATA_ERASE_PASSWORD = 'ironflow';

const idCtrlSchema = z.looseObject({
  mn: z.string().max(64).optional(),
  oacs: z.number().int().nonnegative(),
  fna: z.number().int().nonnegative(),
  sanicap: z.number().int().nonnegative().default(0),
});

interface NvmeCapabilities {
  model: string | null;
  format: boolean;
  cryptoFormat: boolean;
  sanitizeCrypto: boolean;
  sanitizeBlockErase: boolean;
}

/** Reads `nvme id-ctrl --output-format=json`; null when it is not that. */
export function nvmeCapabilities(json: string): NvmeCapabilities | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  const id = idCtrlSchema.safeParse(parsed);
  if (!id.success) return null;
  return {
    model: id.data.mn?.trim() || null,
    format: (id.data.oacs & 0x2) !== 0,
    cryptoFormat: (id.data.fna & 0x4) !== 0,
    sanitizeCrypto: (id.data.sanicap & 0x1) !== 0,
    sanitizeBlockErase: (id.data.sanicap & 0x2) !== 0,
  };
}

export function nvmeErase(caps: NvmeCapabilities, devicePath: string, mode: DeviceEraseMode): EraseDecision {
  if (!caps.format) {
    const sanitize = caps.sanitizeCrypto || caps.sanitizeBlockErase ? '; it offers Sanitize (SANICAP), which this ramdisk does not run yet' : '';
    return { unsupported: `the NVMe controller does not support Format NVM (OACS bit 1 clear)${sanitize}` };
  }
  if (mode === 'crypto-erase' && !caps.cryptoFormat) {
    const sanitize = caps.sanitizeCrypto ? '; it offers Sanitize crypto erase (SANICAP bit 0), which this ramdisk does not run yet' : '';
    return { unsupported: `the NVMe controller does not support cryptographic erase in Format NVM (FNA bit 2 clear)${sanitize}` };
  }
  // Secure Erase Settings: 1 user data erase, 2 cryptographic erase.
  return {
    procedure: {
      commands: [{ command: 'nvme', args: ['format', devicePath, `--ses=${mode === 'crypto-erase' ? 2 : 1}`, '--force'] }],
      timeoutMs: FORMAT_TIMEOUT_MS,
    },
  };
}

interface AtaCapabilities {
  model: string | null;
  security: boolean;
  enabled: boolean;
  locked: boolean;
  frozen: boolean;
  enhancedErase: boolean;
  /** The drive's own estimates (minutes), when it gives them. */
  eraseMinutes: number | null;
  enhancedEraseMinutes: number | null;
  sanitizeCrypto: boolean;
}

/** The indented lines under a top-level heading of `hdparm -I`. */
function sectionOf(identify: string, heading: string): string {
  const lines = identify.split('\n');
  const at = lines.findIndex((l) => l.startsWith(heading));
  if (at < 0) return '';
  const rest = lines.slice(at + 1);
  const end = rest.findIndex((l) => /^\S/.test(l));
  return rest.slice(0, end < 0 ? undefined : end).join('\n');
}

/** A flag line of hdparm's Security section: "\tsupported" or "\tnot\tsupported". */
function securityFlag(section: string, flag: string): boolean {
  const line = section.split('\n').find((l) => new RegExp(`^\\s*(not\\s+)?${flag}\\s*$`).test(l));
  return line !== undefined && !/^\s*not\s/.test(line);
}

/** Reads `hdparm -I`; null when it is not an ATA identify (no Security section is still ATA). */
export function ataCapabilities(identify: string): AtaCapabilities | null {
  if (!/ATA device/.test(identify)) return null;
  const model = /Model Number:\s*(.+)/.exec(identify)?.[1]?.trim() || null;
  const section = sectionOf(identify, 'Security:');
  const minutes = /(\d+)min for SECURITY ERASE UNIT/.exec(section)?.[1];
  const enhancedMinutes = /(\d+)min for ENHANCED SECURITY ERASE UNIT/.exec(section)?.[1];
  // Commands/features lines: "\t   *\tSANITIZE feature set" (the star: enabled); listed at all: supported.
  const feature = (name: string) => new RegExp(`^\\s*\\*?\\s*${name}\\s*$`, 'm').test(identify);
  return {
    model,
    security: securityFlag(section, 'supported'),
    enabled: securityFlag(section, 'enabled'),
    locked: securityFlag(section, 'locked'),
    frozen: securityFlag(section, 'frozen'),
    enhancedErase: /supported: enhanced erase/.test(section),
    eraseMinutes: minutes ? Number(minutes) : null,
    enhancedEraseMinutes: enhancedMinutes ? Number(enhancedMinutes) : null,
    sanitizeCrypto: feature('SANITIZE feature set') && feature('CRYPTO_SCRAMBLE_EXT command'),
  };
}

/** A drive's estimate, doubled, plus ten minutes; eight hours when it gives none (a large spinning disk). */
function ataTimeout(minutes: number | null): number {
  return minutes === null ? 8 * 60 * MINUTE : (minutes * 2 + 10) * MINUTE;
}

export function ataErase(caps: AtaCapabilities, devicePath: string, mode: DeviceEraseMode): EraseDecision {
  if (mode === 'crypto-erase') {
    // CRYPTO SCRAMBLE is the ATA command defined as cryptographic; an enhanced Security Erase is only a vendor pattern.
    if (!caps.sanitizeCrypto) return { unsupported: 'the ATA drive does not support Sanitize CRYPTO SCRAMBLE (no CRYPTO_SCRAMBLE_EXT in its features)' };
    return {
      procedure: {
        commands: [{ command: 'hdparm', args: ['--yes-i-know-what-i-am-doing', '--sanitize-crypto-scramble', devicePath] }],
        pollSanitize: true,
        timeoutMs: FORMAT_TIMEOUT_MS,
      },
    };
  }
  if (!caps.security) return { unsupported: 'the ATA drive does not support the Security feature set' };
  if (caps.frozen)
    return { unsupported: 'the ATA drive is security-frozen by its firmware (power-cycle it without the BIOS freezing it, or suspend and resume, then retry)' };
  if (caps.locked) return { unsupported: 'the ATA drive is security-locked with a password this ramdisk does not know' };
  return {
    procedure: {
      commands: [
        { command: 'hdparm', args: ['--user-master', 'u', '--security-set-pass', ATA_ERASE_PASSWORD, devicePath] },
        { command: 'hdparm', args: ['--user-master', 'u', '--security-erase', ATA_ERASE_PASSWORD, devicePath] },
      ],
      timeoutMs: ataTimeout(caps.eraseMinutes),
    },
  };
}

/** `hdparm --sanitize-status`: still running, done, or failed. */
export function sanitizeState(status: string): 'running' | 'done' | 'failed' {
  if (/In Process/i.test(status)) return 'running';
  if (/Operation Failed|completed unsuccessfully/i.test(status)) return 'failed';
  return 'done';
}
