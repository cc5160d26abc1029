// The shipped cloud-init template (the spec's bcd-host.yaml.hbs, for our agent): the join
// token in a 0600 file, the agent's systemd unit, download with a digest check, join, start.
// The document is serialized by a YAML library from an object, and every value was checked
// to be one plain line, so no value can change its structure.
import { stringify } from 'yaml';
import { AGENT_BINARY, AGENT_UNIT, JOIN_TOKEN_FILE, agentJoinArgv, agentUnitText } from '../../core/userdata/agent-argv';
import type { UserDataVariables } from '../../core/userdata/values';

export const CLOUD_INIT_TEMPLATE = 'ironflow-host.yaml';

export function renderCloudInit(vars: UserDataVariables): string {
  const download = `${AGENT_BINARY}.download`;
  const doc = {
    hostname: vars.hostname,
    write_files: [
      { path: JOIN_TOKEN_FILE, owner: 'root:root', permissions: '0600', content: vars.joinToken },
      { path: `/etc/systemd/system/${AGENT_UNIT}`, owner: 'root:root', permissions: '0644', content: agentUnitText() },
    ],
    runcmd: [
      // agentUrl is single-quoted for sh (it holds no quote); the binary is installed only if its digest matches.
      [
        'sh',
        '-c',
        `curl -fsSL '${vars.agentUrl}' -o ${download} && echo '${vars.agentSha256}  ${download}' | sha256sum -c - && chmod 0755 ${download} && mv ${download} ${AGENT_BINARY}`,
      ],
      agentJoinArgv(vars),
      ['systemctl', 'enable', '--now', AGENT_UNIT],
    ],
  };
  // YAML 1.1 output, as cloud-init's PyYAML reads it (so `0600`, `on`, `yes` stay strings).
  return `#cloud-config\n${stringify(doc, { version: '1.1', lineWidth: 0 })}`;
}
