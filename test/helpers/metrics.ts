// The control plane's /metrics as a test reads it, with the root credential.
import type { TestControlPlane } from './control-plane';

/** A series' value on the control plane's /metrics (0 when it has none yet). */
export async function metricsValue(t: TestControlPlane, series: string): Promise<number> {
  const text = await (await fetch(`${t.cp.url}/metrics`, { headers: { authorization: `Bearer ${t.cp.rootCredential.bearer}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
