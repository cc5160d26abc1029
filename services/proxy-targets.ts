// What site.httpProxy may reach for a machine: the IP addresses its inspection recorded
// (node.inventory.ips), and the BMC host it must never reach. Same checks as BMC access.
import type { AuthenticatedAgent } from './pki/authenticate-agent';
import { machineOfRunningStep, refusalTenant, type BmcAccessDeps } from './bmc-access';
import { recordRefusal } from './joins/refusal';
import type { BmcAccessRequest } from '../core/schemas/agent-bmc-access';
import type { ProxyTargets } from '../core/schemas/agent-proxy-targets';

function addressesOf(inventory: unknown): string[] {
  const ips = (inventory as { ips?: unknown } | null)?.ips;
  return Array.isArray(ips) ? ips.filter((ip): ip is string => typeof ip === 'string').slice(0, 64) : [];
}

function hostOf(address: string | null): string | null {
  if (!address) return null;
  try {
    return new URL(address).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return address.replace(/:\d+$/, '').replace(/^\[|\]$/g, ''); // IPMI: host[:port]
  }
}

export async function proxyTargetsFor(deps: BmcAccessDeps, agent: AuthenticatedAgent, input: BmcAccessRequest): Promise<ProxyTargets> {
  try {
    const node = await machineOfRunningStep(deps, agent, input);
    return { addresses: addressesOf(node.inventory), bmcHost: hostOf(node.bmcAddress) };
  } catch (error) {
    return recordRefusal(deps.db, 'security.proxy-targets.refused', error, {
      tenantId: await refusalTenant(deps.db, agent, input.nodeId),
      subjectId: input.nodeId,
      data: { nodeId: input.nodeId, workflowId: input.workflowId, agentNodeId: agent.nodeId },
    });
  }
}
