// A real site agent for tests: a TOML config written to a temp dir, read by the agent's
// own loader, and the agent started in this process (its log kept in memory).
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { loadSiteAgentConfig } from '../../agent/site/config';
import { AgentLog } from '../../agent/common/log';
import { startSiteAgent, type SiteAgent } from '../../agent/site/main';

export interface SiteAgentFixture {
  dir: string;
  configFile: string;
  lines: string[];
  start(env?: NodeJS.ProcessEnv): Promise<SiteAgent>;
}

export function siteAgentFixture(
  controlPlaneUrl: string,
  options: {
    renewAfter?: string;
    bmcNetworks?: string[];
    boot?: string[];
    bootPort?: number;
    proxyDhcp?: boolean;
    metricsAddress?: string;
    temporalSdkMetricsAddress?: string;
  } = {},
): SiteAgentFixture {
  const dir = mkdtempSync(path.join(inject('runDir'), 'site-agent-'));
  const configFile = path.join(dir, 'site-agent.toml');
  writeFileSync(
    configFile,
    [
      `control_plane_url = ${JSON.stringify(controlPlaneUrl)}`,
      'data_dir = "data"',
      'token_file = "site-token"',
      '',
      '[site]',
      `bmc_networks = ${JSON.stringify(options.bmcNetworks ?? ['192.0.2.0/24'])}`,
      '',
      '[boot]',
      `proxy_dhcp = ${options.proxyDhcp ?? false}`,
      // The boot server (agent/boot) on a free loopback port, so test files never collide
      // (a fixed one when the agent must come back on the same URL after a restart).
      'http_address = "127.0.0.1"',
      `http_port = ${options.bootPort ?? 0}`,
      ...(options.boot ?? []),
      ...(options.renewAfter ? ['', '[certificate]', `renew_after = ${JSON.stringify(options.renewAfter)}`] : []),
      ...(options.metricsAddress ? ['', '[metrics]', `address = ${JSON.stringify(options.metricsAddress)}`] : []),
      ...(options.temporalSdkMetricsAddress ? [`temporal_sdk_address = ${JSON.stringify(options.temporalSdkMetricsAddress)}`] : []),
      '',
    ].join('\n'),
  );
  const lines: string[] = [];
  return {
    dir,
    configFile,
    lines,
    start: (env = {}) => startSiteAgent(loadSiteAgentConfig(configFile), { env, log: new AgentLog((line) => void lines.push(line)) }),
  };
}
