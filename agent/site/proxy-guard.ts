// What site.httpProxy may reach: only an IP literal that is one of the named machine's own
// addresses, never its BMC host (nor any BMC host this agent drove), never an address in
// `[site] bmc_networks`, never a /redfish path (however spelled). No DNS: a name could
// resolve anywhere, so only IP literals are accepted.
import { isIP, type BlockList } from 'node:net';
import { IronflowError } from '../../core/errors';
import { inNetworks } from './networks';

export interface ProxyPolicy {
  /** The machine's own addresses (from its inspection). */
  machineAddresses: readonly string[];
  /** BMC hosts: the machine's and every one this agent has driven. */
  bmcHosts: ReadonlySet<string>;
  bmcNetworks: BlockList;
}

const refused = (reason: string, message: string) => new IronflowError('PERMISSION_DENIED', `site.httpProxy: ${message}`, { reason, path: 'with.url' });

/** Canonical text of an IP (IPv4 as is, IPv6 lower case without brackets). */
const canonical = (ip: string): string => ip.replace(/^\[|\]$/g, '').toLowerCase();

export function checkProxyUrl(raw: string, policy: ProxyPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new IronflowError('INVALID_INPUT', 'site.httpProxy: with.url is not a URL', { path: 'with.url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused('scheme', `only http and https, not ${url.protocol}`);
  if (url.username || url.password) throw refused('credentials', 'no credentials in the URL');
  const host = canonical(url.hostname);
  if (isIP(host) === 0) throw refused('not-an-ip', `${url.hostname} is not an IP address; name one of the machine's addresses`);
  let path: string;
  try {
    path = decodeURIComponent(url.pathname).toLowerCase();
  } catch {
    throw refused('path', 'the path does not decode');
  }
  if (/(^|\/)redfish(\/|$)/.test(path)) throw refused('redfish-path', 'a /redfish path is BMC territory');
  if (policy.bmcHosts.has(host)) throw refused('bmc-host', `${host} is a BMC`);
  if (inNetworks(policy.bmcNetworks, host)) throw refused('bmc-network', `${host} is in the site's bmc_networks`);
  if (!policy.machineAddresses.some((a) => canonical(a) === host)) throw refused('not-the-machine', `${host} is not an address of the named machine`);
  return url;
}
