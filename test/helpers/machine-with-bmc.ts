// A machine as enrollment leaves one for a site step to drive: a node row of the site in
// `inspecting`, with a Redfish BMC and its credentials in the secret store (what
// POST /v1/agents/bmc-access hands a site agent for a running step of it).
import { newId } from '../../services/ids';
import type { ControlPlane } from '../../stack/control-plane';

export interface SeededBmc {
  address: string;
  username: string;
  password: string;
  caPem?: string;
}

/** The new node's id. */
export async function seedMachineWithBmc(cp: Pick<ControlPlane, 'db' | 'secrets'>, siteId: string, bmc: SeededBmc): Promise<string> {
  const nodeId = newId('node');
  const credentialsRef = await cp.secrets.put(cp.db, {
    tenantId: 'root',
    purpose: 'bmc-credentials',
    value: JSON.stringify({ username: bmc.username, password: bmc.password }),
  });
  await cp.db.node.create({
    data: {
      id: nodeId,
      tenantId: 'root',
      siteId,
      role: 'host',
      provisionState: 'inspecting',
      bmcDriver: 'redfish',
      bmcAddress: bmc.address,
      bmcCredentialsRef: credentialsRef,
      bmcCaPem: bmc.caPem ?? null,
    },
  });
  return nodeId;
}
