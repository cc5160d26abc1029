// disk.wipe on the machine's disks. quick: the first and last MiB zeroed (partition tables,
// RAID/LVM superblocks, the GPT backup), each read back; secure-erase: every byte, read back
// in full. The result is node-signed, and `attested` is true only when every read-back
// passed and the signature verifies with this agent's certificate.
import { open } from 'node:fs/promises';
import { z } from 'zod';
import { nodeSignatureValid, signNodeResult } from '../../../core/boot/node-signed';
import { IronflowError, parseWith } from '../../../core/errors';
import type { RamdiskDisk } from '../hardware';
import type { RamdiskStep, RamdiskStepDeps } from './deps';

const MIB = 1024 * 1024;
const wipeWith = z.object({ mode: z.enum(['quick', 'secure-erase', 'crypto-erase']).default('quick') }).strict();

/** Zeroes [start, end) and reads it back; answers whether every byte read back zero. */
async function zeroRange(path: string, start: number, end: number, progress: (done: number) => void): Promise<boolean> {
  const handle = await open(path, 'r+');
  try {
    const zeros = Buffer.alloc(Math.min(MIB, Math.max(0, end - start)));
    for (let at = start; at < end; at += zeros.length) await handle.write(zeros, 0, Math.min(zeros.length, end - at), at);
    await handle.sync();
    const back = Buffer.alloc(zeros.length);
    for (let at = start; at < end; at += back.length) {
      const { bytesRead } = await handle.read(back, 0, Math.min(back.length, end - at), at);
      if (bytesRead !== Math.min(back.length, end - at) || back.subarray(0, bytesRead).some((b) => b !== 0)) return false;
      progress(at + bytesRead - start);
    }
    return true;
  } finally {
    await handle.close();
  }
}

async function wipeDisk(disk: RamdiskDisk, mode: 'quick' | 'secure-erase', progress: (done: number) => void): Promise<{ name: string; bytes: number; readBack: boolean }> {
  if (mode === 'secure-erase') return { name: disk.name, bytes: disk.sizeBytes, readBack: await zeroRange(disk.path, 0, disk.sizeBytes, progress) };
  const head = Math.min(MIB, disk.sizeBytes);
  const tailStart = Math.max(head, disk.sizeBytes - MIB);
  const first = await zeroRange(disk.path, 0, head, progress);
  const last = await zeroRange(disk.path, tailStart, disk.sizeBytes, progress);
  return { name: disk.name, bytes: head + (disk.sizeBytes - tailStart), readBack: first && last };
}

export function diskWipeStep(deps: RamdiskStepDeps): RamdiskStep {
  return async (input) => {
    const { mode } = parseWith(wipeWith, input.with);
    if (mode === 'crypto-erase') throw new IronflowError('UNSUPPORTED', 'crypto-erase needs self-encrypting drives; this machine has none: use quick or secure-erase', { path: 'with.mode' });
    const disks = [];
    for (const disk of deps.hardware.disks) {
      disks.push(await wipeDisk(disk, mode, (done) => deps.heartbeat({ disk: disk.name, bytesWiped: done })));
    }
    const result = { nodeId: deps.nodeId, workflowId: input.workflowId, mode, disks, wipedAt: new Date().toISOString() };
    const signed = signNodeResult(deps.key, 'ironflow-disk-wipe-v1', result);
    const readBack = disks.every((d) => d.readBack);
    const attested = readBack && nodeSignatureValid(deps.certificatePem(), signed);
    deps.log.info('disks wiped', { nodeId: deps.nodeId, mode, disks: disks.length, readBack, attested });
    return { ...result, attested, signed: { ...signed } };
  };
}
