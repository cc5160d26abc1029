// The fleet bench's requests per machine (bench/lib/call-counts.ts), read from the control
// plane's real metrics registry: gateway calls by role and call, API requests by route with
// every status summed, agents' session heartbeats by role, and per-machine growth between two
// readings; the gateway's errors and undelivered tasks in all.
import { describe, expect, it } from 'vitest';
import { callCountsOf, callErrors, callsPerMachine } from '../../bench/lib/call-counts';
import { agentHeartbeats, apiRequestSeconds, gatewayCallErrors, gatewayCalls, gatewayTasksUndelivered, metricsRegistry } from '../../services/metrics/registry';

// Label values no other test uses: the registry is the process's own.
const role = 'bench-counts-role';
const route = '/v1/bench-counts/:id';

describe("the fleet bench's request counts", () => {
  it('reads gateway calls, API requests and heartbeats from the exposition, and their growth per machine', async () => {
    const before = callCountsOf(await metricsRegistry.metrics());
    gatewayCalls.inc({ role, method: 'RecordActivityTaskHeartbeat' }, 30);
    gatewayCalls.inc({ role, method: 'PollActivityTaskQueue' }, 10);
    apiRequestSeconds.observe({ method: 'POST', route, status: '200' }, 0.003);
    apiRequestSeconds.observe({ method: 'POST', route, status: '409' }, 0.004);
    gatewayCallErrors.inc({ role, method: 'RespondActivityTaskCompleted', code: 'NOT_FOUND' });
    gatewayTasksUndelivered.inc({ role });
    agentHeartbeats.inc({ role }, 4);
    const after = callCountsOf(await metricsRegistry.metrics());

    expect(after[`gateway ${role} RecordActivityTaskHeartbeat`]).toBe((before[`gateway ${role} RecordActivityTaskHeartbeat`] ?? 0) + 30);
    const grown = callsPerMachine(before, after, 20);
    expect(grown[`gateway ${role} RecordActivityTaskHeartbeat`]).toBe(1.5);
    expect(grown[`gateway ${role} PollActivityTaskQueue`]).toBe(0.5);
    expect(grown[`api POST ${route}`]).toBe(0.1);
    expect(grown[`heartbeats ${role}`]).toBe(0.2);
    // Largest first, and nothing that did not grow.
    expect(Object.keys(grown)[0]).toBe(`gateway ${role} RecordActivityTaskHeartbeat`);
    expect(Object.values(grown).every((perMachine) => perMachine > 0)).toBe(true);
    // Errors are counted in all, not a machine (one in 20 machines would round to nothing), and apart from the calls.
    expect(Object.keys(grown).some((key) => key.startsWith('gateway error'))).toBe(false);
    expect(callErrors(before, after)).toEqual({
      [`gateway error ${role} RespondActivityTaskCompleted NOT_FOUND`]: 1,
      [`gateway error ${role} task undelivered`]: 1,
    });
  });
});
