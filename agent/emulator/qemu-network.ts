// A provisioning network made of Linux network namespaces, for QEMU machines (`ironflow dev
// emulate --qemu`, the demo, tests): one "switch" namespace holds a bridge (and the taps QEMU
// machines plug into), and each host (the site's DHCP server, the site agent, a test client)
// is a namespace of its own with a veth port on that bridge and an address in its subnet. Nothing touches the host's own
// interfaces: the only way out of a namespace is a loopback relay over a unix socket
// (forwardLoopback), which lets a site agent inside reach the control plane on the host's
// 127.0.0.1 at the same port numbers. Needs root and iproute2.
import { execFile, execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../services/config';
import { spliceSockets } from './splice-sockets';

const PREFIX = 'ifw';
const relayScript = path.join(repoRoot, 'agent/emulator/loopback-relay.ts');

export function requireNetworkNamespaces(): void {
  if (process.getuid?.() !== 0) {
    throw new Error('making network namespaces needs root: run it as root (tests: sudo -E npm test)');
  }
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    throw new Error('`ip` (iproute2) is missing: apt-get install -y iproute2 (tests: bash scripts/test-deps.sh)');
  }
}

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Namespaces left by a process that died without cleaning up (its pid is gone). */
function removeStaleNamespaces(): void {
  const names = ip('netns', 'list')
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(`${PREFIX}-`));
  for (const name of names) {
    const pid = Number(name.split('-')[1]);
    if (Number.isInteger(pid) && pid > 0 && !existsSync(`/proc/${pid}`)) {
      try {
        ip('netns', 'del', name);
      } catch {
        // Another run's cleanup got there first.
      }
    }
  }
}

export interface NetworkHost {
  ns: string;
  ip: string;
  /** The host's interface on the provisioning network (inside its namespace). */
  interface: string;
}

export interface LoopbackForward {
  /** Kills the relay inside the namespace and closes its sockets: open connections break. */
  stop(): Promise<void>;
}

export interface NamespaceNetwork {
  /** The namespace holding the bridge; taps for machines are made here, and QEMU runs here. */
  switchNs: string;
  bridge: string;
  subnet: string;
  hosts: NetworkHost[];
  addHost(label: string, hostNumber: number): NetworkHost;
  /** A tap on the bridge, for a QEMU machine started in switchNs (`-netdev tap,ifname=…`). */
  addTap(): string;
  /** The `-netdev` and spawn of a QEMU machine on a new tap of the bridge (QEMU runs in switchNs, where the tap is). */
  tapNic(): { netdev: string; spawn: (command: string, args: string[], options?: SpawnOptions) => ChildProcess };
  /** Spawns a command inside a namespace. */
  spawnIn(ns: string, command: string, args: string[], options?: SpawnOptions): ChildProcess;
  /** Runs a command inside a namespace and resolves with its stdout (async: relays keep serving). */
  execIn(ns: string, command: string, args: string[]): Promise<string>;
  /** Makes the host's 127.0.0.1:<port> reachable as 127.0.0.1:<port> inside `ns`; stop() cuts it (a partition). */
  forwardLoopback(ns: string, ports: number[]): Promise<LoopbackForward>;
  /**
   * Makes the host's 127.0.0.1:<port> reachable as <host.ip>:<port> on this network, so
   * machines on the bridge (QEMU guests) reach the control plane; stop() cuts it.
   */
  forwardToBridge(host: NetworkHost, ports: number[]): Promise<LoopbackForward>;
  destroy(): Promise<void>;
}

/**
 * Makes a network `subnet`.0/24 (e.g. '10.77.0'); the bridge itself has no address. Each
 * user (a test file, a `dev emulate`) picks its own subnet so networks never share one.
 */
export function createNamespaceNetwork(label: string, subnet: string): NamespaceNetwork {
  requireNetworkNamespaces();
  removeStaleNamespaces();
  const id = `${PREFIX}-${process.pid}-${label}`.slice(0, 40);
  const switchNs = `${id}-sw`;
  const bridge = 'br0';
  const processes: ChildProcess[] = [];
  const servers: net.Server[] = [];
  const namespaces: string[] = [];
  const relayDir = mkdtempSync(path.join(os.tmpdir(), 'ifw-relay-'));
  let ports = 0;
  let taps = 0;

  const addNamespace = (ns: string) => {
    ip('netns', 'add', ns);
    namespaces.push(ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  };
  addNamespace(switchNs);
  ip('-n', switchNs, 'link', 'add', bridge, 'type', 'bridge');
  // No STP and no forwarding delay: a machine's first DHCP packet must not be dropped.
  ip('-n', switchNs, 'link', 'set', bridge, 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0');
  ip('-n', switchNs, 'link', 'set', bridge, 'up');

  /** Relays <listen>:<port> inside `ns` to the host's 127.0.0.1:<port> through unix sockets. */
  const relayHostPorts = async (ns: string, listen: string, forwarded: number[]): Promise<LoopbackForward> => {
    const pairs: string[] = [];
    const own: net.Server[] = [];
    const sockets = new Set<net.Socket>();
    for (const port of forwarded) {
      const socketPath = path.join(relayDir, `${ns.slice(-12)}-${listen}-${port}.sock`);
      const server = net.createServer((inbound) => {
        const outbound = net.connect(port, '127.0.0.1');
        sockets.add(inbound).add(outbound);
        spliceSockets(inbound, outbound);
      });
      await new Promise<void>((resolve) => server.listen(socketPath, resolve));
      servers.push(server);
      own.push(server);
      pairs.push(`${listen}:${port}=${socketPath}`);
    }
    const relay = network.spawnIn(ns, process.execPath, ['--import', 'tsx', relayScript, ...pairs]);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      relay.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('relay ready')) resolve();
      });
      relay.once('exit', (code) => reject(new Error(`the loopback relay in ${ns} exited with ${code}`)));
    });
    return {
      async stop() {
        if (relay.exitCode === null && relay.signalCode === null) {
          const exited = new Promise((resolve) => relay.once('exit', resolve));
          relay.kill('SIGKILL');
          await exited;
        }
        for (const server of own) server.close();
        for (const socket of sockets) socket.destroy();
      },
    };
  };

  const network: NamespaceNetwork = {
    switchNs,
    bridge,
    subnet,
    hosts: [],
    addHost(hostLabel, hostNumber) {
      const ns = `${id}-${hostLabel}`;
      addNamespace(ns);
      ports += 1;
      const outside = `vp${ports}`;
      const inside = 'eth0';
      ip('link', 'add', outside, 'netns', switchNs, 'type', 'veth', 'peer', 'name', inside, 'netns', ns);
      ip('-n', switchNs, 'link', 'set', outside, 'master', bridge, 'up');
      const address = `${subnet}.${hostNumber}`;
      ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', inside);
      ip('-n', ns, 'link', 'set', inside, 'up');
      // Limited broadcasts (255.255.255.255, how DHCP answers a client with no address) need a
      // route; inside the namespace the only one is this network.
      ip('-n', ns, 'route', 'add', 'default', 'dev', inside);
      const host = { ns, ip: address, interface: inside };
      network.hosts.push(host);
      return host;
    },
    addTap() {
      taps += 1;
      const tap = `tap${taps}`;
      ip('-n', switchNs, 'tuntap', 'add', 'dev', tap, 'mode', 'tap');
      ip('-n', switchNs, 'link', 'set', tap, 'master', bridge, 'up');
      return tap;
    },
    tapNic() {
      return {
        netdev: `tap,id=n0,ifname=${network.addTap()},script=no,downscript=no`,
        spawn: (command, args, options) => network.spawnIn(switchNs, command, args, options),
      };
    },
    spawnIn(ns, command, args, options = {}) {
      const child = spawn('ip', ['netns', 'exec', ns, command, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...options });
      processes.push(child);
      return child;
    },
    async execIn(ns, command, args) {
      const { stdout } = await promisify(execFile)('ip', ['netns', 'exec', ns, command, ...args], { encoding: 'utf8' });
      return stdout;
    },
    forwardLoopback: (ns, forwarded) => relayHostPorts(ns, '127.0.0.1', forwarded),
    forwardToBridge: (host, forwarded) => relayHostPorts(host.ns, host.ip, forwarded),
    async destroy() {
      for (const child of processes) if (child.exitCode === null) child.kill('SIGKILL');
      await Promise.all(processes.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => new Promise((r) => c.once('exit', r))));
      for (const server of servers) server.close();
      for (const ns of namespaces.reverse()) {
        try {
          ip('netns', 'del', ns);
        } catch {
          // Already gone.
        }
      }
      rmSync(relayDir, { recursive: true, force: true });
    },
  };
  return network;
}
