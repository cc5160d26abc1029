// How the installed OS runs our agent: the exact argv of `join` and `node`, shared by both
// shipped templates (and by the agent's own tests, which check them against its flags).
import type { UserDataVariables } from './values';

export const AGENT_BINARY = '/usr/local/bin/ironflow';
export const JOIN_TOKEN_FILE = '/etc/ironflow/join-token';
export const JOIN_UNIT = 'ironflow-join.service';
export const AGENT_UNIT = 'ironflow-agent.service';

/** Joins with the provisioned token as the node the OS was installed for; the agent removes the token file once joined. */
export function agentJoinArgv(vars: Pick<UserDataVariables, 'controlPlaneUrl' | 'nodeId' | 'servingCaPin' | 'joinSigningPin' | 'joinEncryptionPin'>): string[] {
  const argv = [AGENT_BINARY, 'agent', 'join', '--server', vars.controlPlaneUrl, '--token-file', JOIN_TOKEN_FILE, '--node-id', vars.nodeId];
  if (vars.servingCaPin && vars.joinSigningPin && vars.joinEncryptionPin) {
    argv.push('--serving-ca-pin', vars.servingCaPin, '--join-signing-pin', vars.joinSigningPin, '--join-encryption-pin', vars.joinEncryptionPin);
  }
  return argv;
}

export function agentNodeArgv(): string[] {
  return [AGENT_BINARY, 'agent', 'node'];
}

/** Characters systemd's ExecStart= takes literally: no quoting, escapes, specifiers (%) or variables ($). */
const plainSystemdArg = /^[A-Za-z0-9._~:\/@+=,\[\]-]+$/;

export function systemdExecLine(argv: string[]): string {
  for (const arg of argv) {
    // The value checks already guarantee this; the unit file is built only from plain words.
    if (!plainSystemdArg.test(arg)) throw new Error(`not a plain systemd argument: ${JSON.stringify(arg)}`);
  }
  return argv.join(' ');
}

/** The node agent's unit: after the join (Ignition's oneshot; cloud-init joins in runcmd). */
export function agentUnitText(): string {
  return [
    '[Unit]',
    'Description=Ironflow node agent',
    `After=network-online.target ${JOIN_UNIT}`,
    'Wants=network-online.target',
    '[Service]',
    `ExecStart=${systemdExecLine(agentNodeArgv())}`,
    'Restart=always',
    'RestartSec=5',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** The one-time join, only while the token file exists (the agent removes it once joined). */
export function joinUnitText(vars: Parameters<typeof agentJoinArgv>[0]): string {
  return [
    '[Unit]',
    'Description=Ironflow node agent: join as the installed node',
    'After=network-online.target',
    'Wants=network-online.target',
    `ConditionPathExists=${JOIN_TOKEN_FILE}`,
    `Before=${AGENT_UNIT}`,
    '[Service]',
    'Type=oneshot',
    `ExecStart=${systemdExecLine(agentJoinArgv(vars))}`,
    'RemainAfterExit=yes',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
