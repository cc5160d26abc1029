// Opens an image's source URL as a byte stream. With no extra CA, Node's fetch (the system's
// trust store). A ramdisk built for a site may carry that site's CA certificates (the
// emulator hands them in): then https goes through node:https with them added to the
// defaults, since Node 20's fetch takes no per-request CA.
import https from 'node:https';
import { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { IronflowError } from '../../core/errors';

const TIMEOUT_MS = 3_600_000;

const unreachable = (source: string, error: Error) =>
  new IronflowError('DRIVER_ERROR', `the image source ${new URL(source).origin} did not answer: ${error.message}`, { reason: 'source-unreachable' });
const badStatus = (status: number) => new IronflowError('DRIVER_ERROR', `the image source answered ${status}`, { reason: 'source-status', status });

export async function openImageSource(source: string, extraCaPems: readonly string[] = []): Promise<Readable> {
  if (extraCaPems.length === 0 || !source.startsWith('https://')) {
    const response = await fetch(source, { signal: AbortSignal.timeout(TIMEOUT_MS) }).catch((error: Error) => {
      throw unreachable(source, error);
    });
    if (!response.ok || !response.body) throw badStatus(response.status);
    return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  }
  return new Promise<Readable>((resolve, reject) => {
    const request = https.get(source, { ca: [...rootCertificates, ...extraCaPems], timeout: TIMEOUT_MS }, (response) => {
      if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) >= 300) {
        response.resume();
        return reject(badStatus(response.statusCode ?? 0));
      }
      resolve(response);
    });
    request.on('error', (error) => reject(unreachable(source, error)));
    request.on('timeout', () => request.destroy(new Error('timed out')));
  });
}

/**
 * With the site agent's cache (a boot's if.cache), its copy of the digest when it has one;
 * a miss or an unreachable cache falls back to the source. Either way the caller checks the
 * digest on the stream, so a cache can never substitute an image.
 */
export async function openCachedOrSource(
  image: { sha256: string; source: string },
  options: { cacheUrl?: string | undefined; extraCaPems?: readonly string[] | undefined },
): Promise<{ stream: Readable; from: 'cache' | 'source'; cacheMiss?: string }> {
  let cacheMiss: string | undefined;
  if (options.cacheUrl) {
    try {
      return { stream: await openImageSource(`${options.cacheUrl.replace(/\/+$/, '')}/${image.sha256}`, options.extraCaPems), from: 'cache' };
    } catch (error) {
      cacheMiss = (error as Error).message;
    }
  }
  return { stream: await openImageSource(image.source, options.extraCaPems), from: 'source', ...(cacheMiss ? { cacheMiss } : {}) };
}
