// PEM ⇄ DER. Tolerant of CRLF and surrounding whitespace; strict about the label.
import { IronflowError } from '../errors';

export function toPem(label: string, der: ArrayBuffer | Uint8Array): string {
  const base64 = Buffer.from(der instanceof Uint8Array ? der : new Uint8Array(der)).toString('base64');
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** The DER of the first PEM block with one of these labels; INVALID_INPUT at `path` otherwise. */
export function fromPem(pem: string, labels: readonly string[], path: string): Uint8Array {
  const match = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/.exec(pem);
  if (!match || !labels.includes(match[1] as string)) {
    throw new IronflowError('INVALID_INPUT', `${path}: expected a PEM block "-----BEGIN ${labels[0]}-----"`, { path });
  }
  const body = (match[2] as string).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw new IronflowError('INVALID_INPUT', `${path}: the PEM body is not base64`, { path });
  return new Uint8Array(Buffer.from(body, 'base64'));
}

/** An ArrayBuffer holding exactly these bytes (asn1js wants one). */
export function exactBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
