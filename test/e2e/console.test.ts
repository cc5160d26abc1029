// The operator console in a real browser (Debian's headless chromium through playwright-core)
// against a real stack: the API serving the console, its database, the control-plane worker
// and Temporal, a real site agent and emulated machines. Sign-in refuses a wrong credential
// and keeps the right one out of URLs, pages and the API's log; every page carries the CSP and runs no
// inline code; forms need the session's CSRF token; a tenant sees only its own sites and
// machines; sign-out ends the session. And the operator's flow: a machine enrolled by its
// product UUID alone (its BMC reports no MAC) PXE-boots, shows up as a candidate, is confirmed
// with a click (behind the browser's confirmation) and reaches ready on the nodes page.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../console/security';
import type { MetalNodeView } from '../../core/schemas/metal';
import { startTestControlPlane } from '../helpers/control-plane';
import { browserTestSkip, launchBrowser, signInToConsole, type Page, type TestBrowser } from '../helpers/browser';
import { startE2eSite, type E2eSite } from '../helpers/e2e-site';

let site: E2eSite;
let browser: TestBrowser;
let base: string;
/** A second tenant's operator: its credential and its own site. */
const acme = { credential: '', siteId: '' };

const skip = browserTestSkip('console');

beforeAll(async () => {
  if (skip) return;
  [site, browser] = await Promise.all([startE2eSite('console-e2e'), launchBrowser()]);
  base = site.t.cp.url;
  await site.t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  const created = await site.t.root.call<{ credential: string }>('POST', '/v1/credentials', {
    tenantId: 'acme',
    name: 'acme operator',
    permissions: ['compute:sites:read', 'compute:nodes:read', 'compute:nodes:provision'],
  });
  acme.credential = created.credential;
  acme.siteId = (
    await site.t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'acme', kind: 'custom', region: 'acme-1', idempotencyKey: 'console-acme' })
  ).id;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

const signIn = (page: Page, credential: string): Promise<void> => signInToConsole(page, base, credential);

/** Inline code on the page: script elements without src, on* handler attributes, style elements and attributes. */
const inlineCode = (page: Page): Promise<{ scripts: number; styles: number }> =>
  page.evaluate(`({
    scripts: document.querySelectorAll('script:not([src])').length + [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
    styles: document.querySelectorAll('style, [style]').length,
  })`);

describe.skipIf(skip !== undefined)('the operator console', () => {
  it('refuses a wrong credential, signs in with the right one and keeps it out of URLs, pages and readable cookies', async () => {
    const page = await browser.newPage();
    const cspViolations: string[] = [];
    page.on('console', (message) => message.text().includes('Content Security Policy') && cspViolations.push(message.text()));

    const redirected = await page.goto(`${base}/console/nodes`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect(redirected?.status()).toBe(200);

    await page.fill('#credential', 'ifk_notacredential.secretsecretsecret');
    const [refused] = await Promise.all([page.waitForNavigation(), page.click('form.sign-in button[type=submit]')]);
    expect(refused?.status()).toBe(401);
    expect(await page.textContent('.flash-error')).toContain('UNAUTHENTICATED');
    expect((await page.context().cookies()).map((c) => c.name)).not.toContain('ironflow_console');

    const rootCredential = site.t.cp.rootCredential.bearer;
    await signIn(page, rootCredential);
    expect(new URL(page.url()).pathname).toBe('/console/discovery');
    const session = (await page.context().cookies()).find((c) => c.name === 'ironflow_console');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console', secure: false });
    expect(await page.evaluate('document.cookie')).toBe('');

    for (const path of ['/console/discovery', '/console/nodes']) {
      const response = await page.goto(`${base}${path}`);
      expect(page.url()).not.toContain(rootCredential);
      expect(await page.content()).not.toContain(rootCredential.split('.')[1] as string);
      expect(response?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
      expect(response?.headers()['x-content-type-options']).toBe('nosniff');
      expect(await inlineCode(page)).toEqual({ scripts: 0, styles: 0 });
      // The page asks console.js to reload it (that the script runs under the CSP shows in the flow below: its confirmations).
      expect(await page.evaluate('document.body.dataset.refreshSeconds')).toBe('5');
    }
    const signInPage = await page.request.get(`${base}/console/sign-in`, { maxRedirects: 0 });
    expect(signInPage.status()).toBe(303); // signed in already
    expect(cspViolations).toEqual([]);
  });

  it('refuses a form post without the session’s CSRF token, and a sign-in form from elsewhere', async () => {
    const page = await browser.newPage();
    await signIn(page, site.t.cp.rootCredential.bearer);
    const forged = await page.request.post(`${base}/console/discovery/confirm`, {
      form: { siteId: site.siteId, nodeId: 'node_x', mac: '02:00:00:00:00:01' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain('PERMISSION_DENIED');
    const wrongToken = await page.request.post(`${base}/console/sign-out`, { form: { csrf: 'not-the-token' }, maxRedirects: 0 });
    expect(wrongToken.status()).toBe(403);
    // A sign-in post without the form's cookie (another site's page) is refused before the credential is looked at.
    const other = await browser.newPage();
    const crossSite = await other.request.post(`${base}/console/sign-in`, {
      form: { csrf: 'x', credential: site.t.cp.rootCredential.bearer },
      maxRedirects: 0,
    });
    expect(crossSite.status()).toBe(403);
    expect((await other.context().cookies()).map((c) => c.name)).not.toContain('ironflow_console');
  });

  it('signs out: the session ends on the server, its cookie no longer opens a page', async () => {
    const page = await browser.newPage();
    await signIn(page, site.t.cp.rootCredential.bearer);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'ironflow_console');
    await Promise.all([page.waitForNavigation(), page.click('form.sign-out button')]);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect((await page.context().cookies()).map((c) => c.name)).not.toContain('ironflow_console');
    const replayed = await fetch(`${base}/console/nodes`, { headers: { cookie: `ironflow_console=${cookie?.value}` }, redirect: 'manual' });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe('/console/sign-in');
  });

  it('an operator sees a machine enrolled by its product UUID alone appear as a candidate, confirms it with a click and watches it reach ready', async () => {
    // An IPMI-like machine: its BMC names no NIC, so only its first PXE boot tells its MAC.
    const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024, bmcReportsMacs: false });
    const mac = machine.description.macs[0] as string;
    const enrolled = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: site.poolId,
      productUuid: machine.description.uuid,
      bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
    });
    const nodeId = enrolled.nodeId;
    expect(enrolled.macs).toEqual([]);

    const page = await browser.newPage();
    await signIn(page, site.t.cp.rootCredential.bearer);
    await page.goto(`${base}/console/discovery?siteId=${site.siteId}`);
    // The page reloads itself every 5 s until the candidate shows.
    const row = `tr.candidate[data-mac="${mac}"]`;
    await page.waitForSelector(row, { timeout: 150_000 });
    expect(await page.textContent(`${row} .badge`)).toBe(`candidate for ${nodeId}`);

    // Meanwhile the nodes page shows it waiting in inspecting, linked into the Temporal Web UI:
    // its workflows (by NodeId) and the running one.
    const waiting = await site.get(nodeId);
    const nodesTab = await page.context().newPage();
    await nodesTab.goto(`${base}/console/nodes`);
    const nodeRow = `tr[data-node-id="${nodeId}"]`;
    expect(await nodesTab.getAttribute(nodeRow, 'data-state')).toBe('inspecting');
    const { address, uiPort, namespace } = site.t.config.temporal;
    const ui = `http://${address.replace(/:\d+$/, '')}:${uiPort}/namespaces/${namespace}/workflows`;
    const links = await nodesTab.$$eval(`${nodeRow} a`, (all) => all.map((a) => [a.getAttribute('href'), a.getAttribute('rel')]));
    expect(links).toEqual([
      [`${ui}?query=${encodeURIComponent(`NodeId="${nodeId}"`)}`, 'noopener noreferrer'],
      [`${ui}/${encodeURIComponent(waiting.workflowId as string)}`, 'noopener noreferrer'],
    ]);
    await nodesTab.close();

    // The browser asks first; a dismissed confirmation sends nothing.
    const questions: string[] = [];
    page.once('dialog', (dialog) => void (questions.push(dialog.message()), dialog.dismiss()));
    await page.click(`${row} button.confirm`);
    expect(questions[0]).toContain(mac);
    expect((await site.get(nodeId)).macs).toEqual([]);

    page.once('dialog', (dialog) => void dialog.accept());
    await Promise.all([page.waitForNavigation(), page.click(`${row} button.confirm`)]);
    expect(await page.textContent('.flash-ok')).toContain(`MAC ${mac} bound to node ${nodeId}`);
    expect(await site.get(nodeId)).toMatchObject({ macs: [mac], macSource: 'operator' });

    // A second binding by hand is refused, and the page shows the API's code and message.
    await page.fill('#bind-node', nodeId);
    await page.fill('#bind-mac', '02:00:00:00:00:99');
    page.once('dialog', (dialog) => void dialog.accept());
    await Promise.all([page.waitForNavigation(), page.click('form.manual-bind button')]);
    expect(await page.textContent('.flash-error')).toMatch(/^Refused: INVALID_STATE: /);

    // The nodes page reloads itself until the machine rests in ready.
    await page.goto(`${base}/console/nodes`);
    const shownReady = await page.waitForSelector(`tr[data-node-id="${nodeId}"][data-state="ready"]`, { timeout: 180_000 }).catch(() => undefined);
    // settle says where the node stands (its workflow's pending steps) when it did not get there.
    const ready = await site.settle(nodeId, 'ready', shownReady ? 30_000 : 1);
    expect(shownReady).toBeDefined();
    expect(ready).toMatchObject({ macs: [mac], productUuid: machine.description.uuid });
  }, 420_000);

  it('is scoped to the credential’s tenant: another tenant’s sites and machines are neither listed nor reachable', async () => {
    const rootNodes = await site.t.root.call<{ nodes: MetalNodeView[] }>('GET', '/v1/metal/nodes?tenantId=root');
    const rootNode = rootNodes.nodes[0] as MetalNodeView; // the machine the flow above brought to ready
    expect(rootNode).toBeDefined();
    const page = await browser.newPage();
    await signIn(page, acme.credential);
    expect(await page.textContent('nav .tenant')).toContain('acme');
    const options = await page.$$eval('#siteId option', (all) => all.map((o) => o.getAttribute('value')));
    expect(options).toEqual([acme.siteId]);
    await page.goto(`${base}/console/discovery?siteId=${site.siteId}`);
    expect(await page.textContent('[role=alert]')).toContain('NOT_FOUND');
    await page.goto(`${base}/console/nodes`);
    expect(await page.$$('tr[data-node-id]')).toHaveLength(0);
    // Binding a MAC to the root tenant's machine through acme's own discovery page.
    await page.goto(`${base}/console/discovery`);
    await page.fill('#bind-node', rootNode.nodeId);
    await page.fill('#bind-mac', '02:00:00:00:00:98');
    page.once('dialog', (dialog) => void dialog.accept());
    await Promise.all([page.waitForNavigation(), page.click('form.manual-bind button')]);
    expect(await page.textContent('.flash-error')).toMatch(/^Refused: NOT_FOUND: /);
    expect((await site.get(rootNode.nodeId)).macs).toEqual(rootNode.macs);
  });

  it('writes no credential into the API’s log: not at sign-in (refused or not), not in the pages’ own API calls', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()) });
    const t = await startTestControlPlane({ logger: { level: 'debug', stream }, worker: false });
    try {
      const bearer = t.cp.rootCredential.bearer;
      const page = await browser.newPage();
      await page.goto(`${t.cp.url}/console/sign-in`);
      await page.fill('#credential', `${bearer}x`);
      await Promise.all([page.waitForNavigation(), page.click('form.sign-in button[type=submit]')]);
      await page.fill('#credential', bearer);
      await Promise.all([page.waitForNavigation(), page.click('form.sign-in button[type=submit]')]);
      await page.goto(`${t.cp.url}/console/nodes`);
      expect(await page.textContent('h1')).toBe('Nodes');
      const log = lines.join('');
      expect(log).toContain('/v1/metal/nodes?tenantId=root'); // the page's own call was logged
      expect(log).not.toContain(bearer.split('.')[1] as string);
    } finally {
      await t.close();
    }
  });
});
