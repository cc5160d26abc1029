// The Temporal Web UI decoding sealed histories through the API's codec endpoint, in headless
// Chromium: a Temporal dev server of this file's own started as the dev stack starts it
// (devServerOptions: --ui-codec-endpoint when histories are sealed), a control plane sealing
// its histories, a provision workflow of control steps. An operator signed in to the console
// sees the workflow's input decoded; a browser without a session sees only ciphertext.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codecEndpointUrl, SEALED_ENCODING } from '../../services/sealing';
import { temporalLinks } from '../../core/temporal-links';
import { devServerOptions, startTemporalServer, temporalServerArgs, type TemporalServer } from '../../stack/temporal-server';
import { browserTestSkip, launchBrowser, signInToConsole, useWebUiCodec, type Page, type TestBrowser } from '../helpers/browser';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { freePort } from '../helpers/ports';
import { createNode } from '../helpers/provision';

let temporal: TemporalServer;
let t: TestControlPlane;
let browser: TestBrowser;
let uiOrigin = '';
let historyUrl = '';
const marker = `webui-sealed-${randomBytes(6).toString('hex')}`;
const SEALED_B64 = Buffer.from(SEALED_ENCODING).toString('base64');

const skip = browserTestSkip('web-ui-codec');

beforeAll(async () => {
  if (skip) return;
  const base = await testConfig({ IRONFLOW_SEAL_HISTORIES: 'true', IRONFLOW_API_PORT: String(await freePort()) });
  const address = `127.0.0.1:${await freePort()}`;
  const config = { ...base, temporal: { ...base.temporal, address, uiPort: await freePort() } };
  const options = devServerOptions(config);
  expect(temporalServerArgs(options)).toEqual(expect.arrayContaining(['--ui-codec-endpoint', codecEndpointUrl(config)]));
  temporal = await startTemporalServer(options);
  uiOrigin = `http://127.0.0.1:${config.temporal.uiPort}`;
  t = await startTestControlPlane({ config });
  browser = await launchBrowser();

  const nodeId = `node_webuicodec${randomBytes(4).toString('hex')}`;
  await createNode(t.cp.db, { nodeId, siteId: 'site_webui_codec' });
  await t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: { id: 'webui-sealed', version: 1, target: 'metal', steps: [{ use: 'event.append', with: { message: marker } }] },
  });
  const { workflowId } = await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/webui-sealed/runs', {
    tenantId: 'root',
    nodeId,
    provisionState: 'inspecting',
  });
  const handle = t.cp.temporal.workflow.getHandle(workflowId);
  await handle.result();
  historyUrl = `${temporalLinks(config).workflow(workflowId)}/${(await handle.describe()).runId}/history`;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await temporal?.stop();
});

/** Where the dev server's Web UI was pointed (the API's port was chosen up front). */
const codecEndpoint = () => codecEndpointUrl(t.config);

/**
 * The page's text once it shows `expected` and no longer `absent` (the Web UI decodes after the
 * first paint, one payload after another), else its text at 30 s.
 */
async function textShowing(page: Page, expected: string, absent?: string): Promise<string> {
  await page.goto(historyUrl);
  const started = Date.now();
  let text = '';
  while (Date.now() - started < 30_000) {
    text = (
      await Promise.all(
        page.frames().map((f) =>
          f
            .locator('body')
            .innerText()
            .catch(() => ''),
        ),
      )
    ).join('\n');
    if (text.includes(expected) && !(absent && text.includes(absent))) return text;
    await new Promise((r) => setTimeout(r, 500));
  }
  return text;
}

describe.skipIf(skip !== undefined)('the Temporal Web UI with sealed histories', () => {
  it('shows a signed-in operator the decoded input, and a browser without a session only ciphertext', async () => {
    const operator = await browser.newPage();
    await useWebUiCodec(operator, uiOrigin, codecEndpoint());
    await signInToConsole(operator, t.cp.url, t.cp.rootCredential.bearer);
    const decoded = await textShowing(operator, marker, SEALED_B64);
    expect(decoded).toContain(marker);
    expect(decoded).not.toContain(SEALED_B64);

    const stranger = await browser.newPage();
    await useWebUiCodec(stranger, uiOrigin, codecEndpoint());
    const sealed = await textShowing(stranger, SEALED_B64);
    expect(sealed).toContain(SEALED_B64);
    expect(sealed).not.toContain(marker);
  });
});
