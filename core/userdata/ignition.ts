// The shipped Ignition template (the spec's bcd-host.ign): an Ignition 3.4.0 config built
// as a JSON object, so values are JSON strings and can never change its structure. Ignition
// itself fetches the agent and checks its sha256; two units join once, then run the agent.
import { AGENT_BINARY, AGENT_UNIT, JOIN_TOKEN_FILE, JOIN_UNIT, agentUnitText, joinUnitText } from './agent-argv';
import type { UserDataVariables } from './values';

export const IGNITION_TEMPLATE = 'ironflow-host.ign';
export const IGNITION_VERSION = '3.4.0';

export interface IgnitionFile {
  path: string;
  mode: number;
  overwrite: boolean;
  contents: { source: string; verification?: { hash: string } };
}
export interface IgnitionUnit {
  name: string;
  enabled: boolean;
  contents: string;
}
export interface IgnitionConfig {
  ignition: { version: typeof IGNITION_VERSION };
  storage: { files: IgnitionFile[] };
  systemd: { units: IgnitionUnit[] };
}

const dataUrl = (text: string) => `data:,${encodeURIComponent(text)}`;

export function buildIgnition(vars: UserDataVariables): IgnitionConfig {
  return {
    ignition: { version: IGNITION_VERSION },
    storage: {
      files: [
        { path: '/etc/hostname', mode: 0o644, overwrite: true, contents: { source: dataUrl(`${vars.hostname}\n`) } },
        { path: JOIN_TOKEN_FILE, mode: 0o600, overwrite: true, contents: { source: dataUrl(vars.joinToken) } },
        { path: AGENT_BINARY, mode: 0o755, overwrite: true, contents: { source: vars.agentUrl, verification: { hash: `sha256-${vars.agentSha256}` } } },
      ],
    },
    systemd: {
      units: [
        { name: JOIN_UNIT, enabled: true, contents: joinUnitText(vars) },
        { name: AGENT_UNIT, enabled: true, contents: agentUnitText() },
      ],
    },
  };
}

export function renderIgnition(vars: UserDataVariables): string {
  return JSON.stringify(buildIgnition(vars));
}
