// deploy.image: streams the image from its source URL over HTTP(S) to the machine's first
// disk (from the site agent's cache first when the boot gave one: if.cache), decompressing
// on the way (none, gzip, zstd), with the sha256 of the bytes as fetched (the catalog's digest is of the artifact) computed on the stream. A digest that
// differs is DRIVER_ERROR, and the written head is zeroed so the machine cannot boot it.
// After fsync the written range is read back and must hash as written. Heartbeats report the
// bytes written.
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { IronflowError, parseWith } from '../../../core/errors';
import { deployImageWithSchema } from '../../../core/steps/metal';
import { decompressor } from '../decompress';
import { dropCachedBlocks } from '../device-read-back';
import { openCachedOrSource } from '../image-source';
import type { RamdiskStep, RamdiskStepDeps } from './deps';

const HEARTBEAT_EVERY_BYTES = 8 * 1024 * 1024;

/** Fetches the deploy's user data (signed, for this node and workflow only) and writes it for the installed OS. */
async function writeUserData(deps: RamdiskStepDeps, workflowId: string, ref: string): Promise<{ kind: string; written: true }> {
  if (!deps.hardware.writeUserData) {
    throw new IronflowError('UNSUPPORTED', 'this ramdisk cannot write user data for the installed OS (no config drive); deploy a profile without userData', {
      reason: 'no-user-data-writer',
    });
  }
  const answer = await deps.client.signedPost<{ kind: 'cloud-init' | 'ignition'; document: string }>(
    { key: deps.key, certificatePem: deps.certificatePem },
    '/v1/agents/user-data',
    { nodeId: deps.nodeId, workflowId, ref },
  );
  await deps.hardware.writeUserData(answer);
  deps.log.info('user data written', { nodeId: deps.nodeId, kind: answer.kind, ref });
  return { kind: answer.kind, written: true };
}

/**
 * The sha256 of the first `length` bytes as the disk returns them now, from the device
 * (device-read-back.ts).
 */
async function readBackDigest(diskPath: string, length: number): Promise<string> {
  await dropCachedBlocks(diskPath);
  const digest = createHash('sha256');
  const handle = await open(diskPath, 'r');
  try {
    const buffer = Buffer.alloc(4 * 1024 * 1024);
    for (let at = 0; at < length;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, length - at), at);
      if (bytesRead === 0) break;
      digest.update(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
  } finally {
    await handle.close();
  }
  return digest.digest('hex');
}

/** Zeroes the written head of the disk, so the machine cannot boot a rejected image. */
async function zeroHead(diskPath: string, written: number): Promise<void> {
  const length = Math.min(written, 1024 * 1024);
  const head = await open(diskPath, 'r+');
  await head.write(Buffer.alloc(length), 0, length, 0).finally(() => head.close());
}

export function deployImageStep(deps: RamdiskStepDeps): RamdiskStep {
  return async (input) => {
    const image = parseWith(deployImageWithSchema, input.with);
    if (image.format === 'qcow2')
      throw new IronflowError('UNSUPPORTED', 'this ramdisk writes raw images; convert qcow2 with qemu-img convert -O raw', { path: 'with.format' });
    const disk = deps.hardware.disks[0];
    if (!disk) throw new IronflowError('INVALID_STATE', 'this machine has no disk to write the image to');
    const opened = await openCachedOrSource(image, { cacheUrl: deps.cacheUrl, extraCaPems: deps.trustedCaPems });
    if (opened.cacheMiss)
      deps.log.info('image not in the site cache: streaming from its source', { nodeId: deps.nodeId, sha256: image.sha256, cache: opened.cacheMiss });
    const source = opened.stream;

    const digest = createHash('sha256');
    let fetched = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        fetched += chunk.length;
        // The catalog's size is of the artifact: a source sending more is not that image, and stops here.
        if (image.sizeBytes !== undefined && fetched > image.sizeBytes) {
          return done(
            new IronflowError('DRIVER_ERROR', `the image source sent more than the catalog's ${image.sizeBytes} bytes: the image was not deployed`, {
              reason: 'size-mismatch',
            }),
          );
        }
        digest.update(chunk);
        done(null, chunk);
      },
    });
    const handle = await open(disk.path, 'r+');
    let written = 0;
    let reported = 0;
    // Uncompressed, the bytes written are the bytes fetched: their digest is computed once (a
    // pass over the image costs seconds in a machine under emulation).
    const writtenDigest = image.compression === 'none' ? null : createHash('sha256');
    const toDisk = new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (written + chunk.length > disk.sizeBytes)
          return done(new IronflowError('DRIVER_ERROR', `the image is larger than disk ${disk.name} (${disk.sizeBytes} bytes)`, { reason: 'image-too-large' }));
        writtenDigest?.update(chunk);
        handle.write(chunk, 0, chunk.length, written).then(() => {
          written += chunk.length;
          if (written - reported >= HEARTBEAT_EVERY_BYTES) {
            reported = written;
            deps.heartbeat({ bytesWritten: written, bytesFetched: fetched });
          }
          done();
        }, done);
      },
    });
    try {
      await pipeline(source, hashing, decompressor(image.compression), toDisk);
      await handle.sync();
    } catch (error) {
      if (error instanceof IronflowError && error.details.reason === 'size-mismatch') await zeroHead(disk.path, written);
      if (error instanceof IronflowError) throw error;
      throw new IronflowError('DRIVER_ERROR', `writing the image failed: ${(error as Error).message}`, { reason: 'write-failed' });
    } finally {
      await handle.close();
    }
    const sha256 = digest.digest('hex');
    if (sha256 !== image.sha256) {
      await zeroHead(disk.path, written);
      throw new IronflowError('DRIVER_ERROR', `the image's digest is ${sha256}, expected ${image.sha256}: the image was not deployed`, {
        reason: 'digest-mismatch',
        sha256,
      });
    }
    const expected = writtenDigest?.digest('hex') ?? sha256;
    const readBack = await readBackDigest(disk.path, written);
    if (readBack !== expected) {
      await zeroHead(disk.path, written);
      throw new IronflowError(
        'DRIVER_ERROR',
        `disk ${disk.name} reads back other bytes than were written (sha256 ${readBack}, wrote ${expected}): the image was not deployed`,
        { reason: 'read-back-mismatch' },
      );
    }
    deps.heartbeat({ bytesWritten: written, bytesFetched: fetched });
    deps.log.info('image written', { nodeId: deps.nodeId, imageId: image.imageId ?? null, bytesWritten: written, sha256, from: opened.from });
    const userData = image.userDataRef ? await writeUserData(deps, input.workflowId, image.userDataRef) : null;
    return {
      sha256,
      bytesWritten: written,
      bytesFetched: fetched,
      fetchedFrom: opened.from,
      disk: disk.name,
      readBackSha256: readBack,
      ...(userData ? { userData } : {}),
    };
  };
}
