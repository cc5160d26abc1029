// A CA pinned by its key: `sha256/<base64 SHA-256 of the SPKI>` (the user data's servingCaPin
// format). An agent given only a pin (a ramdisk's if.tls, a node's --serving-ca-pin) finds
// the pinned CA among the certificates the server sends, then verifies the server against
// that CA alone with OpenSSL's own checks: a server without the CA's key cannot pass.
import { createHash, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { IronflowError } from '../core/errors';

export const caPinPattern = /^sha256\/[A-Za-z0-9+/]{43}=$/;

export function spkiPinOf(certificate: X509Certificate | string): string {
  const cert = typeof certificate === 'string' ? new X509Certificate(certificate) : certificate;
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
  return `sha256/${createHash('sha256').update(spki).digest('base64')}`;
}

/** The certificates a TLS server sent, leaf first (a self-signed one ends the walk). */
function peerChain(socket: tls.TLSSocket): X509Certificate[] {
  const chain: X509Certificate[] = [];
  let cert: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  // A chain is a handful of certificates; the bound only guards against a loop.
  while (cert?.raw && chain.length < 16) {
    chain.push(new X509Certificate(cert.raw));
    if (cert.issuerCertificate === cert) break;
    cert = cert.issuerCertificate;
  }
  return chain;
}

/**
 * The PEM of the certificate in `url`'s TLS chain whose key matches `pin`. The handshake
 * here trusts nothing (it only reads the chain); the caller verifies against the result.
 */
export async function findPinnedCa(url: URL, pin: string, timeoutMs: number): Promise<string> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const socket = tls.connect({
    host,
    port: Number(url.port || 443),
    ...(isIP(host) ? {} : { servername: host }),
    rejectUnauthorized: false,
    timeout: timeoutMs,
  });
  try {
    const chain = await new Promise<X509Certificate[]>((resolve, reject) => {
      socket.once('secureConnect', () => resolve(peerChain(socket)));
      socket.once('timeout', () => reject(new Error(`no TLS handshake within ${timeoutMs} ms`)));
      socket.once('error', reject);
    });
    const ca = chain.find((cert) => cert.ca && spkiPinOf(cert) === pin);
    if (!ca) {
      throw new IronflowError(
        'UNAUTHENTICATED',
        `the server at ${url.host} sent no CA certificate matching the pinned CA (${pin}); serve the full chain (api.tls certFile with its CA) or fix the pin`,
        { reason: 'ca-pin' },
      );
    }
    return ca.toString();
  } finally {
    socket.destroy();
  }
}
