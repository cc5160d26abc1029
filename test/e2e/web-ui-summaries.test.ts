// The Temporal Web UI as the operator's first screen, checked in headless Chromium: a metal
// node's state workflow shows its static summary (node, state, profile, site), its current
// details (the step and what it waits for, since when) and each step activity's summary
// (step key, use, the agent's queue); the node's lifecycle shows its own. A Temporal dev
// server of this file's own runs with its Web UI; the control plane and its worker are real;
// the site agent's BMC side is emulated hardware (an activity-only worker on its queue).
// Histories are sealed, summaries and details too: the operator's browser is signed in to the
// console and the Web UI decodes through the API's codec endpoint (docs/sealed-histories.md).
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteAgentQueue } from '../../core/agent-queues';
import { loadConfig } from '../../services/config';
import type { MetalNodeView } from '../../core/schemas/metal';
import type { MetalStatusView } from '../../core/schemas/metal-status';
import { CODEC_PATH } from '../../services/sealing';
import { serverSettings, startTemporalServer, type TemporalServer } from '../../stack/temporal-server';
import { browserTestSkip, launchBrowser, signInToConsole, useWebUiCodec, type Page, type TestBrowser } from '../helpers/browser';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { freePort } from '../helpers/ports';
import { keepSessions, startEmulatedAgent, until, type EmulatedAgent } from '../helpers/provision';

const AGENT = 'node_webui_site_agent';
let temporal: TemporalServer;
let uiUrl: string;
let t: TestControlPlane;
let browser: TestBrowser;
let agent: EmulatedAgent | undefined;
let session: { stop(): Promise<void> } | undefined;
let siteId: string;
let poolId: string;

const skip = browserTestSkip('web-ui-summaries');

beforeAll(async () => {
  if (skip) return;
  const config = await testConfig();
  const address = `127.0.0.1:${await freePort()}`;
  const uiPort = await freePort();
  temporal = await startTemporalServer({
    address,
    uiPort,
    namespace: 'default',
    dbFile: path.join(config.dataDir, 'temporal.db'),
    ...serverSettings(loadConfig().temporal),
    logFile: path.join(config.dataDir, 'temporal.log'),
  });
  uiUrl = `http://127.0.0.1:${uiPort}`;
  t = await startTestControlPlane({ config: { ...config, temporal: { ...config.temporal, address, uiPort } } });
  browser = await launchBrowser();
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-webui', idempotencyKey: 'webui-site' })).id;
  poolId = (
    await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'metal-host', policy: { hardwareProfile: 'gpu-redfish' } })
  ).id;
});

afterAll(async () => {
  await browser?.close();
  await session?.stop();
  await agent?.stop();
  await t?.close();
  await temporal?.stop();
});

/** The page's text with its frames' (the Web UI renders markdown, summaries and details, in sandboxed iframes). */
async function textOf(page: Page): Promise<string> {
  const texts = await Promise.all(
    page.frames().map((frame) =>
      frame
        .locator('body')
        .innerText()
        .catch(() => ''),
    ),
  );
  return texts.join('\n');
}

/**
 * Opens `url` and waits until its text shows every one of `expected`. The Web UI loads the
 * workflow and queries its current details after the first paint, once: reloaded now and
 * then, as an operator would press R.
 */
async function pageShowing(page: Page, url: string, expected: string[]): Promise<string> {
  await page.goto(url);
  const started = Date.now();
  let text = '';
  for (let tries = 1; ; tries++) {
    text = await textOf(page);
    if (expected.every((e) => text.includes(e))) return text;
    if (Date.now() - started > 30_000) {
      const missing = expected.filter((e) => !text.includes(e));
      throw new Error(`${url} did not show ${JSON.stringify(missing)} within 30 s; its text:\n${text.slice(0, 3000)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
    if (tries % 10 === 0) await page.reload();
  }
}

const statusOf = (nodeId: string) => t.root.call<MetalStatusView>('GET', `/v1/metal/nodes/${nodeId}/status?tenantId=root`);

describe.skipIf(skip !== undefined)('the Temporal Web UI', () => {
  it('shows the summary, the current details and the step activity summary of a metal node workflow', async () => {
    const enrolled = await t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId,
      bmc: { driver: 'redfish', address: 'https://10.0.8.1', username: 'admin', password: 'webui-bmc-password' },
      macs: ['b8:ce:f6:00:08:01'],
    });
    const nodeId = enrolled.nodeId;
    const waiting = await until(
      () => statusOf(nodeId),
      (s) => s.waitingFor !== null,
      30_000,
      'the wait for a site agent',
    );
    const run = waiting.workflow;
    if (!run) throw new Error('no workflow');
    const page = await browser.newPage();
    await useWebUiCodec(page, uiUrl, `${t.cp.url}${CODEC_PATH}`);
    await signInToConsole(page, t.cp.url, t.cp.rootCredential.bearer);
    const metadataUrl = `${uiUrl}${run.webUiPath}/user-metadata`;

    // The state workflow waits for a site agent: its summary, its static details (the plan)
    // and its current details (the step, the wait and since when) say so.
    const waitingPage = await pageShowing(page, metadataUrl, [
      `node ${nodeId} · enrolling · metal-enroll@1 · site ${siteId}`,
      'Profile metal-enroll@1',
      `Waiting for: a connected site agent of site ${siteId} · since`,
    ]);
    expect(waitingPage).toMatch(/Step: steps\[0\] inspect\.oob · since \d{4}-\d\d-\d\dT/);

    // A site agent connects and runs the step (it hangs): the activity's summary names the step and the agent's queue.
    agent = await startEmulatedAgent(t.config, siteAgentQueue(siteId, AGENT), {
      'inspect.oob': async () => {
        for (;;) {
          Context.current().heartbeat();
          await Context.current().sleep(200); // throws when the step is cancelled
        }
      },
    });
    session = keepSessions(t.cp.db, [{ nodeId: AGENT, siteId, role: 'site', taskQueue: siteAgentQueue(siteId, AGENT) }]);
    await until(
      () => statusOf(nodeId),
      (s) => s.step?.activityAttempt !== null && s.step?.activityAttempt !== undefined,
      30_000,
      'inspect.oob to run',
    );
    const activitySummary = `steps[0] · inspect.oob → ${siteAgentQueue(siteId, AGENT)}`;
    const runningPage = await pageShowing(page, metadataUrl, [activitySummary, `Step: steps[0] inspect.oob · on ${siteAgentQueue(siteId, AGENT)} · attempt 1`]);
    expect(runningPage).not.toContain('Waiting for:');
    // Its "Events with Metadata" list above, and the history's timeline here, show the activity by its summary.
    await pageShowing(page, `${uiUrl}${run.webUiPath}/history`, [activitySummary]);

    // The lifecycle: its summary, and details naming the state it drives and the child running it.
    const lifecycle = await t.cp.temporal.workflow.getHandle(`node:${nodeId}`).describe();
    await pageShowing(page, `${uiUrl}/namespaces/default/workflows/${encodeURIComponent(`node:${nodeId}`)}/${lifecycle.runId}/user-metadata`, [
      `node ${nodeId} · lifecycle · site ${siteId}`,
      'Drives: enrolling',
      `Child: ${run.workflowId}`,
    ]);

    await t.root.call('POST', `/v1/metal/nodes/${nodeId}/abort`, { tenantId: 'root', reason: 'web ui test done' });
  });
});
