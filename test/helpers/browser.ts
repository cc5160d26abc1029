// A real browser for tests of web pages (the console, the Temporal Web UI): Debian's
// `chromium`, headless, driven by playwright-core (which ships no browser of its own).
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export type { Browser, BrowserContext, Page };

/** Debian's chromium package puts its launcher here. */
export const CHROMIUM_BINARY = process.env.IRONFLOW_CHROMIUM ?? '/usr/bin/chromium';

export interface TestBrowser {
  browser: Browser;
  /** A page in a fresh context of its own (no cookies shared with other pages). */
  newPage(): Promise<Page>;
  /** Closes every context and page, then the browser. */
  close(): Promise<void>;
}

/**
 * CI runs the browser tests in its SQLite pass only: IRONFLOW_E2E_BROWSER=0 (set by .ci/run for
 * the PostgreSQL re-run) skips a browser test file, which says so on stderr. Their pages read
 * nothing of the database the rest of the suite does not read on both.
 */
export function browserTestSkip(file: string): string | undefined {
  if (process.env.IRONFLOW_E2E_BROWSER !== '0') return undefined;
  const reason = `IRONFLOW_E2E_BROWSER=0: the browser tests run in the other pass (CI runs them on SQLite only)`;
  process.stderr.write(`${file}: skipped: ${reason}\n`);
  return reason;
}

/** Fails with the apt-get command when chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM_BINARY)) {
    throw new Error(`browser tests need Debian's chromium at ${CHROMIUM_BINARY}: apt-get install -y chromium (or bash scripts/test-deps.sh)`);
  }
}

export async function launchBrowser(): Promise<TestBrowser> {
  requireChromium();
  const browser = await chromium.launch({
    executablePath: CHROMIUM_BINARY,
    headless: true,
    // Root has no user namespace sandbox here; /dev/shm is small in containers.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async newPage() {
      const context = await browser.newContext();
      contexts.push(context);
      return context.newPage();
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
    },
  };
}

/**
 * What the Temporal Web UI's "Codec Server" settings store in the browser for pages of
 * `uiOrigin`: its own codec endpoint, with cross-origin credentials included so the console's
 * session cookie goes along (docs/sealed-histories.md). For every page of the page's context.
 */
export async function useWebUiCodec(page: Page, uiOrigin: string, endpoint: string): Promise<void> {
  const settings = { endpoint, includeCredentials: true, overrideRemoteCodecConfiguration: true };
  await page.context().addInitScript({
    content: `if (location.origin === ${JSON.stringify(uiOrigin)}) for (const [k, v] of Object.entries(${JSON.stringify(settings)})) localStorage.setItem(k, JSON.stringify(v));`,
  });
}

/** Signs `page`'s browser in to the console at `apiUrl` with `credential`: its session cookie then goes along to the Web UI's codec requests. */
export async function signInToConsole(page: Page, apiUrl: string, credential: string): Promise<void> {
  await page.goto(`${apiUrl}/console/sign-in`);
  await page.fill('#credential', credential);
  await Promise.all([page.waitForNavigation(), page.click('form.sign-in button[type=submit]')]);
}
