// CIDR lists (`[site] bmc_networks`): parsed once into a node:net BlockList, so "is this
// address in one of them" is one call for IPv4 and IPv6 alike.
import { BlockList, isIP } from 'node:net';

export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `10.0.0.0/24` → its parts, or undefined when it is not a CIDR. */
export function parseCidr(text: string): Cidr | undefined {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  if (!match) return undefined;
  const address = match[1] as string;
  const prefix = Number(match[2]);
  const version = isIP(address);
  if (version === 0) return undefined;
  if (prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

export function networkList(cidrs: readonly Cidr[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  return list;
}

/** Whether an IP address lies in the list; false for anything that is not an IP. */
export function inNetworks(list: BlockList, address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const version = isIP(bare);
  if (version === 0) return false;
  return list.check(bare, version === 4 ? 'ipv4' : 'ipv6');
}
