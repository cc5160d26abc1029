// User data rendering: the shipped cloud-init document passes Debian's `cloud-init schema`,
// the Ignition one passes Debian's `ignition-validate`, both carry exactly the agent's argv,
// and hostile values (quotes, newlines, {{, shell metacharacters) are refused.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { parse } from 'yaml';
import { AGENT_BINARY, JOIN_TOKEN_FILE, agentJoinArgv, agentNodeArgv } from '../../core/userdata/agent-argv';
import { checkUserDataConfig } from '../../core/userdata/config';
import { buildIgnition, type IgnitionConfig } from '../../core/userdata/ignition';
import { renderUserData, type RenderVariablesInput } from '../../services/userdata/render';

const pin = (byte: number) => `sha256/${Buffer.alloc(32, byte).toString('base64')}`;
const pins = { servingCaPin: pin(1), joinSigningPin: pin(2), joinEncryptionPin: pin(3) };
const base: RenderVariablesInput = {
  nodeId: 'node_01k5w8a6b2c3d4e5f6g7h8j9kz',
  joinToken: 'ifjt_jt_01k5w8a6b2c3d4e5f6g7h8j9kz.Zm9vYmFy-_x',
  controlPlaneUrl: 'https://gw.example.com:8443',
  // A presigned URL: & and % must pass, single-quoted for sh.
  agentUrl: 'https://downloads.example.com/ironflow/0.2.0/linux-amd64?X-Amz-Signature=ab%2Fcd&X-Amz-Expires=900',
  agentSha256: 'c0ffee'.padEnd(64, '0'),
  pins,
};
const dir = mkdtempSync(path.join(inject('runDir'), 'userdata-'));

function available(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

function cloudInitSchema(document: string): { ok: boolean; output: string } {
  const file = path.join(dir, `ci-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, document);
  const run = spawnSync('cloud-init', ['schema', '--config-file', file], { encoding: 'utf8' });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

/** The real validators are required: a missing one fails with the command that installs it. */
function requireTool(command: string, install: string): void {
  if (!available(command)) throw new Error(`${command} is not installed: ${install} (or bash scripts/test-deps.sh)`);
}

describe('the cloud-init template', () => {
  it('passes `cloud-init schema --config-file`, with and without pins', () => {
    requireTool('cloud-init', 'apt-get install -y cloud-init');
    for (const vars of [base, { ...base, pins: undefined }]) {
      const { document } = renderUserData('cloud-init', vars);
      const result = cloudInitSchema(document);
      expect(result.ok, result.output).toBe(true);
      expect(result.output).toMatch(/Valid cloud-config/);
    }
  });

  it('the validator is real: it refuses a broken document', () => {
    requireTool('cloud-init', 'apt-get install -y cloud-init');
    expect(cloudInitSchema('#cloud-config\nwrite_files: 3\n').ok).toBe(false);
  });

  it('writes the token 0600, the agent unit, checks the download digest, joins, then starts', () => {
    const { document, template } = renderUserData('cloud-init', base);
    expect(template).toBe('ironflow-host.yaml');
    expect(document.startsWith('#cloud-config\n')).toBe(true);
    const doc = parse(document, { version: '1.1' }) as {
      hostname: string;
      write_files: Array<{ path: string; permissions: string; content: string }>;
      runcmd: string[][];
    };
    expect(doc.hostname).toBe('node-01k5w8a6b2c3d4e5f6g7h8j9kz');
    expect(doc.write_files[0]).toMatchObject({ path: JOIN_TOKEN_FILE, permissions: '0600', content: base.joinToken });
    expect(doc.write_files[1]?.content).toContain(`ExecStart=${agentNodeArgv().join(' ')}`);
    const [download, join, start] = doc.runcmd as [string[], string[], string[]];
    expect(download[2]).toContain(`curl -fsSL '${base.agentUrl}'`);
    expect(download[2]).toContain(`echo '${base.agentSha256}  ${AGENT_BINARY}.download' | sha256sum -c -`);
    expect(join).toEqual(agentJoinArgv({ ...base, ...pins, controlPlaneUrl: base.controlPlaneUrl as string }));
    expect(join).toContain('--join-encryption-pin');
    expect(start).toEqual(['systemctl', 'enable', '--now', 'ironflow-agent.service']);
    // Without pins the three pin arguments are left out.
    const unpinned = parse(renderUserData('cloud-init', { ...base, pins: undefined }).document, { version: '1.1' }) as { runcmd: string[][] };
    expect(unpinned.runcmd[1]).not.toContain('--serving-ca-pin');
  });

  it('the sh -c download line really checks the digest (run against a local file)', () => {
    const binary = path.join(dir, 'agent-binary');
    writeFileSync(binary, 'agent bytes');
    const digest = execFileSync('sha256sum', [binary], { encoding: 'utf8' }).split(' ')[0] as string;
    const line = (sha: string) => {
      const doc = parse(renderUserData('cloud-init', { ...base, agentUrl: `https://example.invalid/x`, agentSha256: sha }).document, { version: '1.1' }) as {
        runcmd: string[][];
      };
      // Swap curl for a copy of the local file; everything after it is the template's own shell.
      return (doc.runcmd[0]?.[2] as string).replace(/curl -fsSL '[^']*' -o/, `cp ${binary}`).replaceAll('/usr/local/bin/ironflow', path.join(dir, 'installed'));
    };
    expect(spawnSync('sh', ['-c', line(digest)]).status).toBe(0);
    expect(spawnSync('sh', ['-c', line('0'.repeat(64))]).status).not.toBe(0);
  });
});

describe('the Ignition template', () => {
  it('is an Ignition 3.4.0 config: token 0600, agent fetched with its sha256, join then agent units', () => {
    const rendered = renderUserData('ignition', base);
    expect(rendered.template).toBe('ironflow-host.ign');
    const config = JSON.parse(rendered.document) as IgnitionConfig;
    expect(config).toEqual(buildIgnition({ ...base, ...pins, hostname: 'node-01k5w8a6b2c3d4e5f6g7h8j9kz' } as never));
    expect(config.ignition.version).toBe('3.4.0');
    const files = Object.fromEntries(config.storage.files.map((f) => [f.path, f]));
    expect(files[JOIN_TOKEN_FILE]).toMatchObject({ mode: 0o600, contents: { source: `data:,${encodeURIComponent(base.joinToken)}` } });
    expect(files[AGENT_BINARY]).toMatchObject({ mode: 0o755, contents: { source: base.agentUrl, verification: { hash: `sha256-${base.agentSha256}` } } });
    const units = Object.fromEntries(config.systemd.units.map((u) => [u.name, u.contents]));
    expect(units['ironflow-join.service']).toContain(`ConditionPathExists=${JOIN_TOKEN_FILE}`);
    expect(units['ironflow-join.service']).toContain(
      `ExecStart=${agentJoinArgv({ ...base, ...pins, controlPlaneUrl: base.controlPlaneUrl as string }).join(' ')}`,
    );
    expect(units['ironflow-agent.service']).toContain('After=network-online.target ironflow-join.service');
  });

  it('passes ignition-validate (Debian ships spec 3.4.0 as 3.4.0-experimental)', () => {
    requireTool('ignition-validate', 'apt-get install -y ignition');
    // Debian's Ignition 2.14 knows spec 3.4.0 under its pre-release name; the structure is
    // the same, so the validator checks ours with only the version string swapped.
    for (const vars of [base, { ...base, pins: undefined }]) {
      const config = JSON.parse(renderUserData('ignition', vars).document) as IgnitionConfig;
      const file = path.join(dir, `ign-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify({ ...config, ignition: { version: '3.4.0-experimental' } }));
      const run = spawnSync('ignition-validate', [file], { encoding: 'utf8' });
      expect(run.status, run.stdout + run.stderr).toBe(0);
      expect(run.stdout + run.stderr).toBe(''); // no warnings (unused keys) either
    }
    const broken = path.join(dir, 'broken.json');
    writeFileSync(
      broken,
      JSON.stringify({
        ignition: { version: '3.4.0-experimental' },
        storage: { files: [{ path: '/x', contents: { source: 'https://e.com/x', verification: { hash: 'sha256-00' } } }] },
      }),
    );
    expect(spawnSync('ignition-validate', [broken]).status).not.toBe(0);
  });
});

describe('hostile values are refused with INVALID_CONFIG', () => {
  const hostile: Array<[keyof RenderVariablesInput, string]> = [
    ['controlPlaneUrl', 'https://gw.example.com/"; rm -rf /'],
    ['controlPlaneUrl', "https://gw.example.com/'x'"],
    ['controlPlaneUrl', 'https://gw.example.com/$(reboot)'],
    ['controlPlaneUrl', 'https://gw.example.com/a;b'],
    ['controlPlaneUrl', 'https://gw.example.com/%h'],
    ['controlPlaneUrl', 'https://gw.example.com/a b'],
    ['controlPlaneUrl', 'https://gw.example.com/\nruncmd: [reboot]'],
    ['controlPlaneUrl', 'ftp://gw.example.com'],
    ['agentUrl', "https://dl.example.com/x'; reboot; echo '"],
    ['agentUrl', 'https://dl.example.com/x"y'],
    ['agentUrl', 'https://dl.example.com/x\\y'],
    ['agentUrl', 'https://dl.example.com/x y'],
    ['agentUrl', 'https://dl.example.com/{{joinToken}}'],
    ['agentUrl', 'https://dl.example.com/x\u2028y'],
    ['agentSha256', 'AB'.repeat(32)],
    ['agentSha256', `${'a'.repeat(64)}\n`],
    ['joinToken', 'ifjt_jt_x.abc\nhostname: evil'],
    ['joinToken', 'ifjt_jt_x.{{nodeId}}'],
    ['joinToken', "ifjt_jt_x.a'b"],
    ['nodeId', 'node_01k5w8a6b2c3d4e5f6g7h8j9kz; reboot'],
  ];
  for (const [field, value] of hostile) {
    it(`${field}: ${JSON.stringify(value)}`, () => {
      for (const kind of ['cloud-init', 'ignition']) {
        expect(() => renderUserData(kind, { ...base, [field]: value })).toThrow(
          expect.objectContaining({ code: 'INVALID_CONFIG', details: expect.objectContaining({ path: expect.stringContaining(field) }) }),
        );
      }
    });
  }

  it('refuses a bad pin and a partial set of pins', () => {
    expect(() => renderUserData('cloud-init', { ...base, pins: { ...pins, servingCaPin: 'sha256/short' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
    expect(() => renderUserData('ignition', { ...base, pins: { servingCaPin: pins.servingCaPin, joinSigningPin: pins.joinSigningPin } })).toThrow(
      /pins come as a set of three; joinEncryptionPin missing/,
    );
    expect(() => checkUserDataConfig({ pins: { joinEncryptionPin: pins.joinEncryptionPin } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', details: { path: 'userData.pins.servingCaPin' } }),
    );
  });

  it('fails without the URLs and the digest', () => {
    expect(() => renderUserData('cloud-init', { nodeId: base.nodeId, joinToken: base.joinToken })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', details: { path: 'userData.controlPlaneUrl' } }),
    );
    expect(() => renderUserData('ignition', { ...base, agentSha256: undefined })).toThrow(/agentSha256 is not configured/);
  });
});

describe('configuration and custom templates', () => {
  it('checks the configuration at configuration time', () => {
    const config = checkUserDataConfig({ controlPlaneUrl: base.controlPlaneUrl, agentUrl: base.agentUrl, agentSha256: base.agentSha256, pins });
    expect(config.tokenTtlSeconds).toBe(7200);
    expect(config.pins).toEqual(pins);
    expect(() => checkUserDataConfig({ controlPlaneUrl: 'https://gw.example.com/`id`' })).toThrow(
      expect.objectContaining({ details: { path: 'userData.controlPlaneUrl' } }),
    );
    expect(() => checkUserDataConfig({ tokenTtlSeconds: 10 })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => checkUserDataConfig({ surprise: 1 })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => checkUserDataConfig({ templates: { 'talos.yaml': 'machine:\n  token: {{joinTokn}}\n' } })).toThrow(
      /placeholder \{\{joinTokn\}\} has no value/,
    );
    expect(() => checkUserDataConfig({ templates: { 'talos.yaml': 'pin: {{servingCaPin}}\n' } })).toThrow(/configure pins/);
    expect(() => checkUserDataConfig({ templates: { 'ironflow-host.ign': '{}' } })).toThrow(/shipped template/);
  });

  it('renders a custom string or function template for a kind without a shipped one (talos)', () => {
    expect(() => renderUserData('talos', base)).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', details: { path: 'userData.template' } }));
    const templates = {
      'talos.yaml': 'machine:\n  nodeLabels:\n    node: {{ nodeId }}\n  token: {{joinToken}}\n  pin: {{servingCaPin}}\n',
      'talos-fn': (vars: Readonly<{ hostname: string }>) => `host: ${vars.hostname}\n`,
      'broken.yaml': 'x: {{nope}}\n',
    };
    const rendered = renderUserData('talos', base, { template: 'talos.yaml', templates });
    expect(rendered.document).toBe(`machine:\n  nodeLabels:\n    node: ${base.nodeId}\n  token: ${base.joinToken}\n  pin: ${pins.servingCaPin}\n`);
    expect(renderUserData('talos', base, { template: 'talos-fn', templates }).document).toBe('host: node-01k5w8a6b2c3d4e5f6g7h8j9kz\n');
    expect(() => renderUserData('talos', base, { template: 'broken.yaml', templates })).toThrow(/placeholder \{\{nope\}\} has no value/);
    expect(() => renderUserData('talos', { ...base, pins: undefined }, { template: 'talos.yaml', templates })).toThrow(/\{\{servingCaPin\}\} has no value/);
    expect(() => renderUserData('talos', base, { template: 'missing' })).toThrow(/no template missing/);
    expect(() => renderUserData('ignition', base, { template: 'ironflow-host.yaml' })).toThrow(/renders cloud-init, not ignition/);
  });
});
