// The secret scanner (issue 13): a whole emulated lifecycle runs end to end (a machine enrolled
// by its BMC alone reaches ready through inspection and commissioning, a signed image deploys
// and its OS joins, undeploy wipes it back to ready), while the test collects the literal
// secrets it created or saw minted: API bearers, the site token, every discovery and
// provisioned token and BMC password the secret store held during the run, every private
// key found on disk or in the store, and the secret store's and history sealing's keys. Then everything an attacker or an operator could read
// afterwards is scanned for each literal, in clear and base64-encoded at any alignment (how a
// Temporal payload carries JSON): every Temporal history of the run read raw with the Temporal
// CLI (no codec), the whole event log, every log file of the control plane, the site agent,
// the fleet and the Temporal server, and every API answer the test received (an answer that
// mints a bearer may hold that one only). The scanner itself is proved on planted values first.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CREDENTIAL_SCHEME } from '../../services/credentials';
import { JOIN_TOKEN_SCHEME } from '../../core/join-token-scheme';
import type { MetalNodeView } from '../../core/schemas/metal';
import { HISTORY_KEYS_FILE, type HistoryKeyRingFile } from '../../services/sealing/key-ring';
import { requireTool } from '../../stack/tools';
import { startE2eSite, type E2eSite } from '../helpers/e2e-site';

const run = promisify(execFile);

interface Secret {
  /** What it is (never the value): shown when it leaks. */
  name: string;
  value: string;
}

interface Text {
  /** Where it was read (a file, a workflow's history, an API answer). */
  where: string;
  text: string;
}

/**
 * Hands `onAnswer` each whole answer to a request of this process sent without an agent's
 * signature, by wrapping node:http's and node:https's request; answers the undo.
 */
function recordAnswers(onAnswer: (url: string, method: string, contentType: string, text: string) => void): () => void {
  const wrapped = [http, https].map((module) => {
    const original = module.request;
    module.request = ((...args: Parameters<typeof http.request>) => {
      const request = original(...args);
      if (request.hasHeader('x-ironflow-agent-signature')) return request;
      const url = `${request.protocol}//${String(request.getHeader('host'))}${request.path}`;
      request.on('response', (response: http.IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => onAnswer(url, request.method, response.headers['content-type'] ?? '', Buffer.concat(chunks).toString('utf8')));
      });
      return request;
    }) as typeof http.request;
    return () => void (module.request = original);
  });
  return () => wrapped.forEach((undo) => undo());
}

/** Literals shorter than this would match by chance; every secret here is longer. */
const MIN_SECRET_CHARS = 12;

/**
 * The forms a literal takes in text: itself, and its base64 and base64url encodings at each of
 * the three byte alignments, cut to the characters that do not depend on its neighbours, so it
 * is found inside a larger encoded payload too.
 */
export function encodedForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = new Set([value]);
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const stable = encoded.slice(shift === 0 ? 0 : Math.ceil((shift * 4) / 3) + 1, encoded.length - 4);
    if (stable.length >= MIN_SECRET_CHARS) {
      forms.add(stable);
      forms.add(stable.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...forms];
}

/** Every (text, secret) pair where the secret shows in any of its forms. */
export function findLeaks(texts: Text[], secrets: Secret[]): Array<{ where: string; secret: string }> {
  const leaks: Array<{ where: string; secret: string }> = [];
  const forms = secrets.filter((s) => s.value.length >= MIN_SECRET_CHARS).map((s) => ({ name: s.name, forms: encodedForms(s.value) }));
  for (const { where, text } of texts) {
    for (const secret of forms) if (secret.forms.some((form) => text.includes(form))) leaks.push({ where, secret: secret.name });
  }
  return leaks;
}

/** A PEM private key's body lines (64 base64 characters each): any one of them showing is a leak. */
function privateKeyLines(name: string, pem: string): Secret[] {
  const blocks = pem.match(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g) ?? [];
  return blocks.flatMap((block, b) =>
    block
      .split('\n')
      .filter((line) => line.length >= MIN_SECRET_CHARS && !line.startsWith('-----'))
      .map((line, i) => ({ name: `${name} (key ${b}, line ${i})`, value: line.trim() })),
  );
}

const bearerPattern = new RegExp(`\\b(?:${JOIN_TOKEN_SCHEME}|${CREDENTIAL_SCHEME})_[A-Za-z0-9_]+\\.[A-Za-z0-9_-]{20,}`, 'g');

/** The bearers (whole, and their secret part) and keys inside a value the secret store held. */
function secretsIn(name: string, value: string): Secret[] {
  const found: Secret[] = [...privateKeyLines(name, value)];
  for (const bearer of value.match(bearerPattern) ?? []) {
    found.push({ name: `${name}: a bearer`, value: bearer }, { name: `${name}: a bearer's secret`, value: bearer.slice(bearer.lastIndexOf('.') + 1) });
  }
  try {
    const parsed = JSON.parse(value) as { password?: unknown };
    if (typeof parsed.password === 'string') found.push({ name: `${name}: a password`, value: parsed.password });
  } catch {
    // not JSON: its bearers and keys are what it holds
  }
  return found;
}

/** Every regular file under `dir` whose name says it is a log. */
function logFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.log$|log\.(txt|json)$|\.log\.\d+$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** Every regular file under `dir` holding a PEM private key (agents' identities). */
function keyFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && statSync(path.join(entry.parentPath, entry.name)).size < 64 * 1024)
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => readFileSync(file, 'latin1').includes('PRIVATE KEY-----'));
}

describe('the scanner', () => {
  it('finds a planted secret in clear, base64 and base64url at any offset inside a larger payload, and only there', () => {
    const planted = `ifjt_jt_planted.${randomBytes(32).toString('base64url')}`;
    const payloads = [0, 1, 2].map((pad) => Buffer.from(JSON.stringify({ pad: 'x'.repeat(pad), token: planted })).toString('base64'));
    const texts: Text[] = [
      { where: 'clear', text: `{"msg":"joined","token":"${planted}"}` },
      ...payloads.map((p, i) => ({ where: `base64 ${i}`, text: `{"data":"${p}"}` })),
      { where: 'base64url', text: Buffer.from(`??>${planted}`).toString('base64url') },
      { where: 'clean', text: `{"tokenId":"jt_planted","note":"${randomBytes(48).toString('base64')}"}` },
    ];
    expect(findLeaks(texts, [{ name: 'planted', value: planted }]).map((l) => l.where)).toEqual(['clear', 'base64 0', 'base64 1', 'base64 2', 'base64url']);
    // A PEM key's line is found in a JSON-escaped log line.
    const pem = `-----BEGIN PRIVATE KEY-----\n${randomBytes(48).toString('base64')}\n${randomBytes(30).toString('base64')}\n-----END PRIVATE KEY-----\n`;
    const keyLines = privateKeyLines('planted key', pem);
    expect(keyLines).toHaveLength(2);
    expect(findLeaks([{ where: 'escaped', text: JSON.stringify({ key: pem }) }], keyLines)).toHaveLength(2);
    // And it is what the end-to-end scan below uses: a leak makes that test fail.
    expect(secretsIn('stored', JSON.stringify({ username: 'admin', password: 'a-planted-bmc-password' })).map((s) => s.value)).toEqual([
      'a-planted-bmc-password',
    ]);
  });
});

describe('an emulated lifecycle', () => {
  let site: E2eSite;
  const answers: Array<Text & { url: string }> = [];
  const secrets = new Map<string, Secret>();
  /** Keyed by value: the first name a value was seen under is the one a leak reports. */
  const remember = (secret: Secret) => void (secrets.has(secret.value) || secrets.set(secret.value, secret));
  let restoreRequests: (() => void) | undefined;
  let collecting: NodeJS.Timeout | undefined;
  let collected = Promise.resolve();

  /** Reads every value the secret store holds now (discovery tokens, user data, BMC credentials, the node CA's key…). */
  async function collectStoredSecrets(): Promise<void> {
    const rows = await site.t.cp.db.secret.findMany({ select: { id: true, purpose: true } });
    for (const row of rows) {
      const value = await site.t.cp.secrets.get(site.t.cp.db, row.id).catch(() => undefined);
      if (value) for (const secret of secretsIn(`secret store ${row.purpose.split(':')[0]}`, value)) remember(secret);
    }
  }

  beforeAll(async () => {
    // Every API answer the test (not an agent's signed request) receives, recorded where every
    // API client sends (services/trusted-fetch.ts): node:http's and node:https's request.
    restoreRequests = recordAnswers((url, method, contentType, text) => {
      // Kept with its URL: the API's port is known only once the site started.
      if (!/octet-stream/.test(contentType)) answers.push({ url, where: `answer to ${method} ${url.replace(/\?.*/, '')}`, text });
    });
    // The site agent as its own process: its log is what it printed, scanned with the rest.
    site = await startE2eSite('secret-scan-site', { siteAgentProcess: true });
    collecting = setInterval(() => void (collected = collected.then(collectStoredSecrets).catch(() => undefined)), 250);
  }, 120_000);

  afterAll(async () => {
    if (collecting) clearInterval(collecting);
    restoreRequests?.();
    await site?.close();
  });

  it('leaves no bearer, token, BMC password or private key in histories, events, logs or API answers', async () => {
    const temporal = requireTool('temporal');
    remember({ name: 'the root credential', value: site.t.cp.rootCredential.bearer });
    remember({ name: 'the site token', value: site.siteToken });
    const created = await site.t.root.call<{ credential: string }>('POST', '/v1/credentials', { tenantId: 'root', name: 'scan', permissions: ['*'] });
    remember({ name: 'a created credential', value: created.credential });

    // Enroll by the BMC alone → inspect → commission → ready; deploy a signed image; undeploy.
    const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024 });
    remember({ name: 'the BMC password', value: bmc.password });
    const node = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: site.poolId,
      bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
    });
    await site.settle(node.nodeId, 'ready', 120_000);
    await site.registerImage('scan-os@1', randomBytes(256 * 1024));
    await site.deployProfile('scan-os-host', 'scan-os@1');
    await site.verb(node.nodeId, 'deploy', { profileId: 'scan-os-host', profileVersion: 1 });
    await site.settle(node.nodeId, 'deployed', 120_000);
    expect(machine.state).toBe('installed-os');
    await site.verb(node.nodeId, 'undeploy');
    await site.settle(node.nodeId, 'ready', 120_000);
    clearInterval(collecting);
    await collected;
    await collectStoredSecrets();

    // Keys on disk: the site agent's identity, the fleet's machines, the control plane's.
    const dataDirs = [site.t.config.dataDir, site.agent.dataDir];
    for (const dir of dataDirs)
      for (const file of keyFiles(dir)) for (const secret of privateKeyLines(`the key in ${path.basename(file)}`, readFileSync(file, 'utf8'))) remember(secret);
    remember({ name: 'the secret store key', value: readFileSync(path.join(site.t.config.dataDir, 'secret-store.key'), 'utf8').trim() });
    const historyKeys = path.join(site.t.config.dataDir, HISTORY_KEYS_FILE);
    if (existsSync(historyKeys))
      for (const { key } of (JSON.parse(readFileSync(historyKeys, 'utf8')) as HistoryKeyRingFile).keys) remember({ name: 'a history sealing key', value: key });
    for (const secret of [...secrets.values()]) {
      const bearer = new RegExp(`^(?:${CREDENTIAL_SCHEME}|${JOIN_TOKEN_SCHEME})_.+\\.`).test(secret.value);
      if (bearer) remember({ name: `${secret.name}'s secret`, value: secret.value.slice(secret.value.lastIndexOf('.') + 1) });
    }
    const literals = [...secrets.values()];
    // What the run must have produced for the scan to mean anything.
    const names = literals.map((s) => s.name).join('\n');
    expect(names).toMatch(/secret store discovery-token: a bearer/);
    expect(names).toMatch(/secret store userdata: a bearer/);
    expect(names).toMatch(/the BMC password/);
    expect(names).toMatch(/the key in /);

    const texts: Text[] = [];
    // Every Temporal history of this control plane's workflows, raw: no codec.
    const address = ['--address', site.t.config.temporal.address, '--namespace', site.t.config.temporal.namespace];
    const list = (
      await run(temporal, ['workflow', 'list', ...address, '--query', `TaskQueue = "${site.t.config.controlQueue}"`, '--limit', '1000', '-o', 'json'], {
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout.trim();
    // An array, or one execution a line (the CLI's versions differ).
    const listed = (
      list.startsWith('[')
        ? JSON.parse(list)
        : list
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line))
    ) as Array<{ execution: { workflowId: string; runId: string } }>;
    expect(listed.length).toBeGreaterThanOrEqual(4); // enroll, inspect, commission, deploy, release, the site's boot controller…
    for (const { execution } of listed) {
      const shown = await run(temporal, ['workflow', 'show', ...address, '-w', execution.workflowId, '-r', execution.runId, '-o', 'json'], {
        maxBuffer: 64 * 1024 * 1024,
      });
      texts.push({ where: `history of ${execution.workflowId}`, text: shown.stdout });
    }
    // The whole event log.
    const events = await site.t.cp.db.event.findMany();
    expect(events.length).toBeGreaterThan(20);
    texts.push({ where: 'the event log', text: JSON.stringify(events) });
    // Every log file: the control plane's (API), the site agent's, the fleet's, Temporal's; and the lines kept in memory.
    const files = [...dataDirs.flatMap(logFiles), ...logFiles(inject('runDir')).filter((f) => /temporal-\d+\.log$/.test(f))];
    expect(files.some((f) => f.endsWith('api.log'))).toBe(true);
    for (const file of files) texts.push({ where: file, text: readFileSync(file, 'utf8') });
    expect(site.agent.lines().length).toBeGreaterThan(10);
    texts.push({ where: 'the fleet log', text: site.fleetLog.join('\n') }, { where: 'the site agent log', text: site.agent.lines().join('\n') });

    // Every API answer: one that mints a bearer may hold that one, and nothing else.
    const apiAnswers = answers.filter((answer) => answer.url.startsWith(site.t.cp.url));
    for (const answer of apiAnswers) {
      let text = answer.text;
      if (/answer to POST \S+\/v1\/(credentials|sites\/[^/]+\/tokens)$/.test(answer.where)) {
        const minted = (JSON.parse(text) as { credential?: string; token?: string }).credential ?? (JSON.parse(text) as { token?: string }).token;
        if (minted) text = text.split(minted).join('[minted]');
      }
      texts.push({ where: answer.where, text });
    }
    expect(apiAnswers.length).toBeGreaterThan(20);

    const leaks = findLeaks(texts, literals);
    expect(leaks, `scanned ${texts.length} texts for ${literals.length} secrets`).toEqual([]);
  }, 420_000);
});
