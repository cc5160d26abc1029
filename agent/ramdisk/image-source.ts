// Opens an image's source URL as a byte stream. With no extra CA, Node's fetch (the system's
// trust store). A ramdisk built for a site may carry that site's CA certificates (the
// emulator hands them in): then https goes through node:https with them added to the
// defaults, since Node 20's fetch takes no per-request CA.
import https from 'node:https';
import { Readable } from 'node:stream';
import { createSecureContext, rootCertificates } from 'node:tls';
import { IronflowError } from '../../core/errors';

const TIMEOUT_MS = 3_600_000;
/**
 * A source that resets or refuses the connection, or answers 502, 503 or 504, is asked again
 * (as Ironic's agent retries image downloads): nothing is read or written before it answers,
 * and an origin under a fleet's load drops a connection now and then.
 */
const SOURCE_ATTEMPTS = 4;
const RETRY_BASE_MS = 1_000;
const PASSING_STATUSES = new Set([502, 503, 504]);

const unreachable = (source: string, error: Error) =>
  new IronflowError('DRIVER_ERROR', `the image source ${new URL(source).origin} did not answer: ${error.message}`, { reason: 'source-unreachable' });
const badStatus = (status: number) => new IronflowError('DRIVER_ERROR', `the image source answered ${status}`, { reason: 'source-status', status });

/**
 * The system's trust store with the extra CAs, built once per list: parsing the ~140 system
 * roots again cost every download about 30 ms of CPU, paid by each of a fleet's emulated
 * ramdisks (they share a process) and by each pull of the site agent's cache.
 */
let trusted: { key: string; agent: https.Agent } | undefined;
function agentTrusting(extraCaPems: readonly string[]): https.Agent {
  const key = extraCaPems.join('\n');
  if (trusted?.key !== key) trusted = { key, agent: new https.Agent({ secureContext: createSecureContext({ ca: [...rootCertificates, ...extraCaPems] }) }) };
  return trusted.agent;
}

/** Opens the source, asking again (up to `attempts` in all, backing off) while its failure may pass. */
export async function openImageSource(source: string, extraCaPems: readonly string[] = [], attempts = SOURCE_ATTEMPTS): Promise<Readable> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openOnce(source, extraCaPems);
    } catch (error) {
      if (attempt >= attempts || !mayPass(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_BASE_MS * 2 ** (attempt - 1)));
    }
  }
}

function mayPass(error: unknown): boolean {
  if (!(error instanceof IronflowError)) return false;
  const { reason, status } = error.details;
  return reason === 'source-unreachable' || (reason === 'source-status' && typeof status === 'number' && PASSING_STATUSES.has(status));
}

async function openOnce(source: string, extraCaPems: readonly string[]): Promise<Readable> {
  if (extraCaPems.length === 0 || !source.startsWith('https://')) {
    const response = await fetch(source, { signal: AbortSignal.timeout(TIMEOUT_MS) }).catch((error: Error) => {
      throw unreachable(source, error);
    });
    if (!response.ok || !response.body) throw badStatus(response.status);
    return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  }
  return new Promise<Readable>((resolve, reject) => {
    const request = https.get(source, { agent: agentTrusting(extraCaPems), timeout: TIMEOUT_MS }, (response) => {
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
 * a miss or an unreachable cache falls back to the source at once (the cache is asked once). Either way the caller checks the
 * digest on the stream, so a cache can never substitute an image.
 */
export async function openCachedOrSource(
  image: { sha256: string; source: string },
  options: { cacheUrl?: string | undefined; extraCaPems?: readonly string[] | undefined },
): Promise<{ stream: Readable; from: 'cache' | 'source'; cacheMiss?: string }> {
  let cacheMiss: string | undefined;
  if (options.cacheUrl) {
    try {
      return { stream: await openImageSource(`${options.cacheUrl.replace(/\/+$/, '')}/${image.sha256}`, options.extraCaPems, 1), from: 'cache' };
    } catch (error) {
      cacheMiss = (error as Error).message;
    }
  }
  return { stream: await openImageSource(image.source, options.extraCaPems), from: 'source', ...(cacheMiss ? { cacheMiss } : {}) };
}
