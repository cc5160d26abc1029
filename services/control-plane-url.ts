// The one rule every agent mode applies to the control plane's URL before it sends anything:
// plain http only to a loopback address. Off loopback an agent sends join tokens, discovery
// assertions and signed requests, so it talks https to a CA it pins (issue 13).
import { isIPv4, isIPv6 } from 'node:net';
import { IronflowError } from '../core/errors';

/** 127.0.0.0/8, ::1, an IPv4-mapped 127.x (URL writes it ::ffff:7f..), or the name localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  if (isIPv4(host)) return host.startsWith('127.');
  if (!isIPv6(host)) return false;
  if (host === '::1') return true;
  const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(host);
  return mapped !== null && parseInt(mapped[1] as string, 16) >> 8 === 127;
}

/**
 * INVALID_CONFIG unless `url` is https, or http to a loopback host. `key` names the setting
 * (`control_plane_url`, `if.gateway`, `--server`) and `pinHint` how this mode pins the CA.
 * The message quotes only scheme, host and port: a URL's user info never reaches a log.
 */
export function requireTlsOffLoopback(url: string, key: string, pinHint: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new IronflowError('INVALID_CONFIG', `${key} is not a URL; give https://<host>[:port] of the Ironflow API`, { path: key });
  }
  if (parsed.protocol === 'https:') return;
  if (parsed.protocol !== 'http:') {
    throw new IronflowError('INVALID_CONFIG', `${key} is a ${parsed.protocol.replace(/:$/, '')} URL; give https://<host>[:port] of the Ironflow API`, {
      path: key,
    });
  }
  if (isLoopbackHost(parsed.hostname)) return;
  throw new IronflowError(
    'INVALID_CONFIG',
    `${key} is plain http to ${parsed.host}, which is not a loopback address: an agent sends its join token and signed requests there, so it refuses plain http off loopback. Use https://${parsed.host} (the API's api.tls) and pin its CA (${pinHint})`,
    { path: key, reason: 'plain-http-off-loopback' },
  );
}
