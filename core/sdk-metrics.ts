// The Temporal SDK's worker metrics, read from the exporter its runtime telemetry runs
// (worker/runtime.ts), so a process's own GET /metrics serves them beside its own counts:
// one scrape target per process.

/** The SDK exporter answers on loopback at once; a stuck one must not hold a scrape. */
const SDK_SCRAPE_TIMEOUT_MS = 2000;

/** The exporter's text, or a comment line saying why there is none (a scrape never fails for it). */
export async function scrapeSdkMetrics(address: string | undefined): Promise<string> {
  if (!address) return '';
  try {
    const response = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(SDK_SCRAPE_TIMEOUT_MS) });
    return response.ok ? await response.text() : `# the Temporal SDK's exporter at ${address} answered HTTP ${response.status}\n`;
  } catch (err) {
    return `# the Temporal SDK's exporter at ${address} did not answer: ${(err as Error).message}\n`;
  }
}
