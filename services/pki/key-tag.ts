// An agent key's tag: what names a ramdisk's queue (core/agent-queues.ts). A ramdisk makes its
// key afresh at each boot and a renewal keeps it, so the tag names one boot.
import { createHash } from 'node:crypto';

/** The first 8 bytes of the SHA-256 of the key's DER SubjectPublicKeyInfo, in hex (what core/agent-queues.ts checks a ramdisk queue by). */
export const agentKeyTag = (spkiDer: Uint8Array): string => createHash('sha256').update(spkiDer).digest('hex').slice(0, 16);
