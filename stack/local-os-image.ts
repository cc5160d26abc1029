// A signed OS image served over HTTPS on loopback and registered in the root tenant's catalog:
// what the demo, the fleet bench and the replay recorder deploy onto emulated (or QEMU)
// machines. Its server's certificate chains to a throwaway CA the ramdisks must trust (caPem).
// And the profile that deploys it onto an emulated machine, whose installed OS the ramdisk
// kexecs into.
import { createHash, sign, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { ApiClient } from '../cli/api-client';
import { imageSigningInput } from '../core/images/signing-input';
import { makeServerCertificate } from './throwaway-tls';

export interface LocalOsImage {
  /** The catalog ref, `<name>-os@1`. */
  ref: string;
  /** The digest of the bytes served (the gzipped image), as the catalog holds it. */
  sha256: string;
  /** The CA the image server's certificate chains to. */
  caPem: string;
  /** Where the server serves it (the catalog's source), and the server's loopback port. */
  source: string;
  port: number;
  close(): Promise<void>;
}

export interface LocalOsImageOptions {
  /** Names the image (`<name>-os@1`) and the server's host (`images.<name>`). */
  name: string;
  /** The raw disk image; served gzipped. */
  raw: Buffer;
  /** Where the server's throwaway CA and certificate are written (made 0700). */
  dir: string;
  /** A signer the root tenant already trusts (addImageSigner), and its private key. */
  signer: { id: string; privateKey: KeyObject };
}

/** Serves the image and registers it, signed; close() stops the server. */
export async function serveLocalOsImage(api: ApiClient, options: LocalOsImageOptions): Promise<LocalOsImage> {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const tls = makeServerCertificate(options.dir, `images.${options.name}`);
  const file = `/${options.name}-os.raw.gz`;
  const gzipped = gzipSync(options.raw);
  const server = https.createServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, (req, res) => {
    if (req.url !== file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': gzipped.length }).end(gzipped);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const { port } = server.address() as AddressInfo;
  try {
    const image = {
      tenantId: 'root',
      ref: `${options.name}-os@1`,
      kind: 'os',
      format: 'raw',
      compression: 'gzip',
      sha256: createHash('sha256').update(gzipped).digest('hex'),
      sizeBytes: gzipped.length,
      source: `https://127.0.0.1:${port}${file}`,
    };
    await api.call('POST', '/v1/images', {
      ...image,
      signerId: options.signer.id,
      signature: sign(null, imageSigningInput(image), options.signer.privateKey).toString('base64'),
    });
    return { ref: image.ref, sha256: image.sha256, caPem: tls.caPem, source: image.source, port, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** How long the emulated deploy's steps may take: the ramdisk's boot, the image written, the installed OS's agent back. */
export interface EmulatedDeployTimeouts {
  boot: string;
  deploy: string;
  rejoin: string;
}

/** A metal profile (its document without id and version) that deploys `imageRef` onto an emulated machine and waits for its OS's agent. */
export function emulatedOsHostProfile(
  imageRef: string,
  timeouts: EmulatedDeployTimeouts = { boot: '5m', deploy: '10m', rejoin: '5m' },
): Record<string, unknown> {
  return {
    target: 'metal',
    image: { ref: imageRef, format: 'raw', compression: 'gzip' },
    userData: { kind: 'cloud-init', template: 'ironflow-host.yaml' },
    steps: [
      { use: 'userdata.render' },
      { use: 'metal.ensureRamdisk', timeout: timeouts.boot },
      { use: 'deploy.deploy', timeout: timeouts.deploy },
      { use: 'management.setBootDevice', on: 'site', with: { device: 'disk', persistent: true } },
      { use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: timeouts.rejoin },
    ],
    cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
  };
}
