// What the control plane's /metrics counts of its callers' requests, for a bench to say how many
// of each a machine made: agents' calls through the gateway by call (polls, heartbeats,
// completions; ironflow_gateway_calls_total) and API requests by method and route, agents'
// signed requests among them (ironflow_api_request_duration_seconds_count, every status).

/** Counts by `gateway <role> <call>` and `api <METHOD> <route>`. */
export type CallCounts = Record<string, number>;

const SERIES = /^(ironflow_gateway_calls_total|ironflow_api_request_duration_seconds_count)\{([^}]*)\} (\S+)$/;

function labels(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
}

/** The counts in a Prometheus exposition of the control plane's metrics. */
export function callCountsOf(metricsText: string): CallCounts {
  const counts: CallCounts = {};
  for (const line of metricsText.split('\n')) {
    const match = SERIES.exec(line);
    if (!match) continue;
    const [, name, labelText, value] = match as unknown as [string, string, string, string];
    const l = labels(labelText);
    const key = name === 'ironflow_gateway_calls_total' ? `gateway ${l.role} ${l.method}` : `api ${l.method} ${l.route}`;
    counts[key] = (counts[key] ?? 0) + Number(value);
  }
  return counts;
}

/** The counts on the control plane's /metrics now. */
export async function readCallCounts(url: string, bearer: string): Promise<CallCounts> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${bearer}` } });
  if (!response.ok) throw new Error(`GET ${url}/metrics answered ${response.status}`);
  return callCountsOf(await response.text());
}

/** Each count's growth from `before` to `after`, per machine, rounded to a tenth; counts that did not grow are left out. */
export function callsPerMachine(before: CallCounts, after: CallCounts, machines: number): CallCounts {
  const grown = Object.entries(after)
    .map(([key, value]) => [key, Math.round(((value - (before[key] ?? 0)) / machines) * 10) / 10] as const)
    .filter(([, perMachine]) => perMachine > 0)
    .sort((a, b) => b[1] - a[1]);
  return Object.fromEntries(grown);
}
