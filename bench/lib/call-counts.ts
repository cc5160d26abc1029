// What the control plane's /metrics counts of its callers' requests, for a bench to say how many
// of each a machine made: agents' calls through the gateway by call (polls, heartbeats,
// completions; ironflow_gateway_calls_total) and API requests by method and route, agents'
// signed requests among them (ironflow_api_request_duration_seconds_count, every status); and
// agents' session heartbeats by role (ironflow_agent_heartbeats_total, the share of
// POST /v1/agents/session each role sent); the gateway's error answers by call and status
// (ironflow_gateway_call_errors_total) and the tasks agents had given up on
// (ironflow_gateway_tasks_undelivered_total), in all.

/** Counts by their keyOf. */
export type CallCounts = Record<string, number>;

const SERIES =
  /^(ironflow_gateway_calls_total|ironflow_gateway_call_errors_total|ironflow_gateway_tasks_undelivered_total|ironflow_agent_heartbeats_total|ironflow_api_request_duration_seconds_count)\{([^}]*)\} (\S+)$/;

/** A count's key: `gateway <role> <call>`, `gateway error <role> <call> <status>`, `gateway error <role> task undelivered`, `heartbeats <role>` or `api <METHOD> <route>`. */
function keyOf(name: string, l: Record<string, string>): string {
  if (name === 'ironflow_gateway_calls_total') return `gateway ${l.role} ${l.method}`;
  if (name === 'ironflow_gateway_call_errors_total') return `gateway error ${l.role || '(unchecked)'} ${l.method} ${l.code}`;
  if (name === 'ironflow_gateway_tasks_undelivered_total') return `gateway error ${l.role} task undelivered`;
  if (name === 'ironflow_agent_heartbeats_total') return `heartbeats ${l.role}`;
  return `api ${l.method} ${l.route}`;
}

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
    const key = keyOf(name, labels(labelText));
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

const isError = (key: string) => key.startsWith('gateway error ');

/** The counts that grew from `before` to `after`, each growth divided by `per` and rounded to a tenth, largest first. */
function grown(before: CallCounts, after: CallCounts, keep: (key: string) => boolean, per: number): CallCounts {
  const growth = Object.entries(after)
    .filter(([key]) => keep(key))
    .map(([key, value]) => [key, Math.round(((value - (before[key] ?? 0)) / per) * 10) / 10] as const)
    .filter(([, value]) => value > 0)
    .sort((a, b) => b[1] - a[1]);
  return Object.fromEntries(growth);
}

/** Each call count's growth per machine; the gateway's errors are callErrors'. */
export const callsPerMachine = (before: CallCounts, after: CallCounts, machines: number): CallCounts => grown(before, after, (key) => !isError(key), machines);

/** The gateway's error answers between the readings, in all: a few among a fleet's calls would round to nothing a machine. */
export const callErrors = (before: CallCounts, after: CallCounts): CallCounts => grown(before, after, isError, 1);
