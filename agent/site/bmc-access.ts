// A step's BMC: the agent asks the control plane for the machine's BMC access for this
// workflow (POST /v1/agents/bmc-access, signed), builds the driver with the credentials,
// runs the step's commands and closes it. The credentials live in this call's memory only:
// never written to disk, logged, or returned in a result.
import type { StepInput } from '../../core/plan';
import type { BmcAccess } from '../../core/schemas/agent-bmc-access';
import type { BmcTargetInput } from '../../core/schemas/bmc';
import { createBmcDriver, type BmcDriver } from '../bmc';
import { reliableDriver } from '../bmc/reliable';
import type { ControlPlaneClient, Signer } from '../common/control-plane-client';
import type { AgentLog } from '../common/log';
import { untilAnswered } from '../common/until-answered';
import { stepDeadline } from '../../services/step-deadline';
import { stepScope } from '../common/step-scope';

export interface BmcAccessDeps {
  client: ControlPlaneClient;
  signer: Signer;
  /** Every BMC host this agent drove: site.httpProxy refuses them. */
  drivenBmcHosts: Set<string>;
  log?: AgentLog;
}

function hostOf(target: BmcTargetInput): string {
  const host = target.driver === 'redfish' ? new URL(target.address).hostname : target.address.replace(/:\d+$/, '');
  return host.replace(/^\[|\]$/g, '').toLowerCase();
}

/** A Redfish address may name one system: https://bmc/redfish/v1/Systems/<id>. */
export function bmcTargetOf(access: Pick<BmcAccess, 'driver' | 'address' | 'caPem'>): BmcTargetInput {
  if (access.driver === 'ipmi') return { driver: 'ipmi', address: access.address };
  const url = new URL(access.address);
  const system = /^\/redfish\/v1\/Systems\/([^/]+)\/?$/.exec(url.pathname);
  return {
    driver: 'redfish',
    address: url.origin,
    ...(system ? { systemId: decodeURIComponent(system[1] as string) } : {}),
    ...(access.caPem ? { caPem: access.caPem } : {}),
  };
}

export async function withBmc<T>(deps: BmcAccessDeps, input: StepInput, run: (driver: BmcDriver) => Promise<T>): Promise<T> {
  const deadline = stepDeadline();
  const scope = stepScope(input);
  const access = await untilAnswered((timeoutMs) => deps.client.signedPost<BmcAccess>(deps.signer, '/v1/agents/bmc-access', scope, timeoutMs), {
    deadline,
    firstTimeoutMs: deps.client.timeoutMs,
    onRetry: (retry) =>
      deps.log?.warn('the control plane did not answer for the BMC access; asking again', {
        nodeId: input.target.nodeId,
        workflowId: input.workflowId,
        ...retry,
      }),
  });
  const target = bmcTargetOf(access);
  deps.drivenBmcHosts.add(hostOf(target));
  // Flaky BMCs are the norm: retried with backoff and read back (agent/bmc/reliable.ts) until the step's deadline.
  const driver = reliableDriver(createBmcDriver(target, { username: access.username, password: access.password }), {
    deadline,
    onRetry: (retry) =>
      deps.log?.warn('BMC call failed; trying again', { nodeId: input.target.nodeId, workflowId: input.workflowId, step: input.stepKey, ...retry }),
  });
  try {
    return await run(driver);
  } finally {
    await driver.close();
  }
}
