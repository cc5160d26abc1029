// The site's own DHCP server on a namespace network (agent/emulator/qemu-network.ts): dnsmasq giving
// addresses only, no PXE options, so the PXE part is the site agent's proxy DHCP alone.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { NamespaceNetwork, NetworkHost } from './qemu-network';

const DNSMASQ = '/usr/sbin/dnsmasq';

export interface AddressOnlyDhcp {
  child: ChildProcess;
  /** The address leased to a MAC (its lease file: "<expiry> <mac> <ip> …"; dnsmasq unicasts its answers). */
  leasedIp(mac: string): string | undefined;
  /** dnsmasq's log tail: explains a machine that got no address. */
  log(): string;
}

export function requireDnsmasq(): void {
  if (!existsSync(DNSMASQ)) throw new Error('dnsmasq is missing: apt-get install -y dnsmasq-base (tests: bash scripts/test-deps.sh)');
}

/** dnsmasq in `host`'s namespace leasing <subnet>.100–150; its lease file goes in `dir`. */
export function startAddressOnlyDhcp(network: NamespaceNetwork, host: NetworkHost, dir: string): AddressOnlyDhcp {
  requireDnsmasq();
  const leaseFile = path.join(dir, 'dnsmasq.leases');
  const child = network.spawnIn(host.ns, DNSMASQ, [
    '--no-daemon',
    '--conf-file=/dev/null',
    '--port=0',
    `--dhcp-range=${network.subnet}.100,${network.subnet}.150,12h`,
    `--interface=${host.interface}`,
    '--bind-interfaces',
    `--dhcp-leasefile=${leaseFile}`,
    '--pid-file=',
    // Not the unprivileged user it drops to by default: the lease file is in the run's 0700 dir.
    '--user=root',
    '--log-dhcp',
  ]);
  let log = '';
  // Read, or a full pipe would stall it.
  child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-3000)));
  return {
    child,
    leasedIp: (mac) =>
      (existsSync(leaseFile) ? readFileSync(leaseFile, 'utf8') : '')
        .split('\n')
        .map((line) => line.split(' '))
        .find((fields) => fields[1] === mac)?.[2],
    log: () => log,
  };
}
