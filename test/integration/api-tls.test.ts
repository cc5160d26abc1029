// The API on TLS (api.tls / IRONFLOW_API_TLS_CERT, IRONFLOW_API_TLS_KEY): a real control
// plane serving HTTPS with a throwaway CA, and its real clients trusting that CA the way
// each is configured: the CLI (--ca-file, IRONFLOW_CA_FILE), a site agent
// (control_plane_ca_file), a ramdisk or an installed OS (a pin of the CA's key, found in the
// chain the API serves). Bad TLS files stop the start with INVALID_CONFIG naming the file.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadSiteAgentConfig } from '../../agent/site/config';
import { ControlPlaneClient, ControlPlaneUnreachable } from '../../agent/common/control-plane-client';
import { AgentLog } from '../../agent/common/log';
import { startSiteAgent } from '../../agent/site/main';
import { ApiClient } from '../../cli/api-client';
import { spkiPinOf } from '../../services/ca-pin';
import { loadConfig } from '../../services/config';
import { startControlPlane } from '../../stack/control-plane';
import { activeAgent } from '../helpers/boot-site';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { makeServerCertificate, type TestCertificates } from '../helpers/tls';

let t: TestControlPlane;
let certs: TestCertificates;
let other: TestCertificates;

beforeAll(async () => {
  certs = makeServerCertificate(mkdtempSync(path.join(inject('runDir'), 'api-tls-')), 'api.test');
  other = makeServerCertificate(mkdtempSync(path.join(inject('runDir'), 'other-tls-')), 'api.test');
  t = await startTestControlPlane({ config: await testConfig({ IRONFLOW_API_TLS_CERT: certs.chainFile, IRONFLOW_API_TLS_KEY: certs.keyFile }) });
}, 120_000);
afterAll(async () => t?.close());

describe('the API on TLS', () => {
  it('serves https (its public URL too) to a client trusting its CA; not to the system store, not plain http', async () => {
    expect(t.cp.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(t.config.api.publicUrl).toMatch(/^https:/);
    const trusted = new ApiClient(t.cp.url, undefined, { caPems: [certs.caPem] });
    expect((await trusted.request('GET', '/healthz')).status).toBe(200);
    await expect(new ApiClient(t.cp.url).request('GET', '/healthz')).rejects.toThrow(/cannot reach the Ironflow API/);
    await expect(new ApiClient(t.cp.url, undefined, { caPems: [other.caPem] }).request('GET', '/healthz')).rejects.toThrow(
      /does not chain to a CA this client trusts/,
    );
    const plain = await fetch(t.cp.url.replace('https:', 'http:') + '/healthz').then(
      (r) => r.status,
      (error: Error) => error.message,
    );
    expect(plain).not.toBe(200);
  });

  it('a pinned CA is found in the chain the API serves; another pin is refused before any request', async () => {
    const pinned = new ControlPlaneClient(t.cp.url, 5_000, { caPin: spkiPinOf(certs.caPem) });
    expect((await pinned.get<{ certificate: string }>('/v1/join/ca')).certificate).toContain('BEGIN CERTIFICATE');
    const wrong = new ControlPlaneClient(t.cp.url, 5_000, { caPin: spkiPinOf(other.caPem) });
    await expect(wrong.get('/v1/join/ca')).rejects.toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'ca-pin' } });
    // The leaf's own key is not a CA: pinning it finds nothing.
    const leafPin = spkiPinOf(readFileSync(certs.certFile, 'utf8'));
    await expect(new ControlPlaneClient(t.cp.url, 5_000, { caPin: leafPin }).get('/v1/join/ca')).rejects.toMatchObject({ details: { reason: 'ca-pin' } });
    await expect(new ControlPlaneClient(t.cp.url, 5_000, { caPems: [other.caPem] }).get('/v1/join/ca')).rejects.toBeInstanceOf(ControlPlaneUnreachable);
  });

  it('the CLI trusts --ca-file or IRONFLOW_CA_FILE, and names the fix without them', async () => {
    const env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
    const withFlag = await runCli(['status', '--check', '--format', 'json', '--ca-file', certs.caFile], env);
    expect(withFlag.code, withFlag.stderr).toBe(0);
    const withEnv = await runCli(['status', '--check', '--format', 'json'], { ...env, IRONFLOW_CA_FILE: certs.caFile });
    expect(withEnv.code, withEnv.stderr).toBe(0);
    const without = await runCli(['status', '--check'], { ...env, IRONFLOW_CA_FILE: '' });
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(
      /cannot reach the Ironflow API at https:.*\(TLS: the API's certificate does not chain to a CA this client trusts \(SELF_SIGNED_CERT_IN_CHAIN\); check the CA file or pin\).*needs --ca-file or IRONFLOW_CA_FILE/,
    );
    const missing = await runCli(['status'], { ...env, IRONFLOW_CA_FILE: '/nonexistent/ca.pem' });
    expect(missing.stderr).toMatch(/INVALID_CONFIG: IRONFLOW_CA_FILE \/nonexistent\/ca\.pem cannot be read/);
  });

  it('a site agent with control_plane_ca_file joins and holds its session over TLS', async () => {
    const site = await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-tls', idempotencyKey: 'api-tls' });
    const { token } = await t.root.call<{ token: string }>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 600, maxUses: 1 });
    const dir = mkdtempSync(path.join(inject('runDir'), 'tls-agent-'));
    writeFileSync(path.join(dir, 'api-ca.pem'), certs.caPem);
    const configFile = path.join(dir, 'site-agent.toml');
    writeFileSync(
      configFile,
      [
        `control_plane_url = ${JSON.stringify(t.cp.url)}`,
        'control_plane_ca_file = "api-ca.pem"',
        'data_dir = "data"',
        '',
        '[boot]',
        'http_address = "127.0.0.1"',
        'http_port = 0',
        '',
      ].join('\n'),
    );
    const config = loadSiteAgentConfig(configFile);
    const agent = await startSiteAgent(config, { env: { IRONFLOW_JOIN_TOKEN: token }, log: new AgentLog(() => undefined) });
    try {
      await activeAgent(agent);
      expect(agent.identity.current.siteId).toBe(site.id);
    } finally {
      await agent.stop();
    }
  });
});

describe('bad TLS files stop the start, naming the file and the fix', () => {
  it('a missing certificate file', async () => {
    const config = loadConfig({
      ...process.env,
      IRONFLOW_DATA_DIR: mkdtempSync(path.join(inject('runDir'), 'cp-')),
      IRONFLOW_API_TLS_CERT: '/nonexistent/api.pem',
      IRONFLOW_API_TLS_KEY: certs.keyFile,
    });
    await expect(startControlPlane(config, { migrate: false })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(
        /the API's TLS certificate \/nonexistent\/api\.pem cannot be read \(ENOENT\): fix api\.tls in temporal-dev\.yaml or IRONFLOW_API_TLS_CERT/,
      ),
      details: { path: 'api.tls.certFile' },
    });
  });

  it("a key that is not the certificate's, a file that is no key, and only one of the two", async () => {
    const dataDir = mkdtempSync(path.join(inject('runDir'), 'cp-'));
    const mismatched = loadConfig({ ...process.env, IRONFLOW_DATA_DIR: dataDir, IRONFLOW_API_TLS_CERT: certs.chainFile, IRONFLOW_API_TLS_KEY: other.keyFile });
    await expect(startControlPlane(mismatched, { migrate: false })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining(`the API's TLS key ${other.keyFile} does not go with the certificate ${certs.chainFile}`),
    });
    const notAKey = loadConfig({ ...process.env, IRONFLOW_DATA_DIR: dataDir, IRONFLOW_API_TLS_CERT: certs.chainFile, IRONFLOW_API_TLS_KEY: certs.caFile });
    await expect(startControlPlane(notAKey, { migrate: false })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('holds no PEM key'),
      details: { path: 'api.tls.keyFile' },
    });
    expect(() => loadConfig({ ...process.env, IRONFLOW_API_TLS_CERT: certs.chainFile, IRONFLOW_API_TLS_KEY: '' })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('set IRONFLOW_API_TLS_KEY (api.tls.keyFile) too') }),
    );
  });
});
