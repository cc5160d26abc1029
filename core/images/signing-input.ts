// What an image signer signs: the UTF-8 text `bc-image-v1`, then the kind, ref, format,
// compression and lower-case sha256, one per line (joined by "\n", no trailing newline).
// Publishers sign exactly these bytes; the catalog rebuilds them from its row to verify.
export const IMAGE_SIGNING_VERSION = 'bc-image-v1';

export interface ImageIdentity {
  kind: string;
  ref: string;
  format: string;
  compression: string;
  sha256: string;
}

export function imageSigningInput(image: ImageIdentity): Buffer {
  const lines = [IMAGE_SIGNING_VERSION, image.kind, image.ref, image.format, image.compression, image.sha256.toLowerCase()];
  return Buffer.from(lines.join('\n'), 'utf8');
}
