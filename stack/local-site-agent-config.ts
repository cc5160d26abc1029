// The config of a site agent that runs beside the control plane on this host (the demo, the
// fleet bench): no BMC networks to guard, no proxy DHCP, its boot server on a free loopback port.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Writes `<dir>/site-agent.toml` (dir made 0700) and answers its path. */
export function writeLocalSiteAgentConfig(dir: string, controlPlaneUrl: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'site-agent.toml');
  writeFileSync(
    file,
    [
      `control_plane_url = ${JSON.stringify(controlPlaneUrl)}`,
      'data_dir = "data"',
      '',
      '[site]',
      'bmc_networks = []',
      '',
      '[boot]',
      'proxy_dhcp = false',
      'http_address = "127.0.0.1"',
      'http_port = 0',
      '',
    ].join('\n'),
  );
  return file;
}
