// disk.wipe's modes and its signed answer: the one list of wipe modes (a release's wipe, a
// retire's pool policy, the ramdisk's erase and the attestation check all derive from it).
import { z } from 'zod';
import { attestationSchema } from '../attestations/attestation-schema';

export const wipeModes = ['quick', 'secure-erase', 'crypto-erase'] as const;
export type WipeMode = (typeof wipeModes)[number];
/** What a disk whose drive cannot do the mode may get instead: a weaker wipe (never crypto-erase). */
export const wipeFallbackModes = ['quick', 'secure-erase'] as const satisfies readonly WipeMode[];
export type WipeFallbackMode = (typeof wipeFallbackModes)[number];

export const diskWipeWithSchema = z.object({ mode: z.enum(wipeModes).default('quick'), fallback: z.enum(wipeFallbackModes).optional() }).strict();

export const wipedDiskSchema = z.object({
  name: z.string().max(256),
  /** The device erase's model, when the drive names one. */
  model: z.string().max(256).nullable().optional(),
  /** The mode this disk got: the one asked for, or the fallback (then fallbackFrom says why). */
  // A string, not the enum: a mode the step did not ask for is refused naming it (services/attestations/results.ts).
  mode: z.string().max(32).optional(),
  /** How it was erased: the commands and ranges. */
  method: z.string().max(4096).optional(),
  bytes: z.number().int().min(0).optional(),
  readBack: z.boolean(),
  /** Why the disk got the fallback (the ramdisk: `{ mode, reason }`); shown, never relied on. */
  fallbackFrom: z.unknown().optional(),
});
export type WipedDisk = z.infer<typeof wipedDiskSchema>;

export const diskWipeResultSchema = z.object({
  nodeId: z.string().max(64).optional(),
  workflowId: z.string().max(256).optional(),
  mode: z.enum(wipeModes),
  disks: z.array(wipedDiskSchema).min(1).max(1024),
  wipedAt: z.string().max(64).optional(),
});
export type DiskWipeResult = z.infer<typeof diskWipeResultSchema>;
/** disk.wipe's answer: the result with the ramdisk's attestation beside it. */
export const diskWipeOutputSchema = diskWipeResultSchema.extend({ attestation: attestationSchema });
