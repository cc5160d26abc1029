// The BMC operation ledger the site agent really uses (agent/site/remote-operation-ledger.ts),
// for tests that run BMC commands: a control plane, a site agent joined with its own key and
// certificate, and one machine whose state workflow runs (waiting for a ramdisk that never joins),
// so the control plane keeps that workflow's operations for the agent.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ControlPlaneClient, type Signer } from '../../agent/common/control-plane-client';
import { RemoteOperationLedger } from '../../agent/site/remote-operation-ledger';
import type { Plan } from '../../core/plan';
import { compileProfile } from '../../profiles/compiler';
import { newId } from '../../services/ids';
import { startTestControlPlane, type TestControlPlane } from './control-plane';
import { newKeyAndCsr, workDir } from './openssl';

export interface SharedLedgerFixture {
  t: TestControlPlane;
  workflowId: string;
  /** An operation id of the running workflow: the control plane refuses another workflow's. */
  operationId(name: string): string;
  /** The ledger as one step attempt of the site agent sees it (a retried step, or another agent, is a new one). */
  ledger(): RemoteOperationLedger;
  close(): Promise<void>;
}

/** One step that waits for a ramdisk that never joins. */
const holdingPlan: Plan = compileProfile(
  { id: 'ledger-hold', version: 1, target: 'metal', steps: [{ use: 'wait.agentJoined', with: { role: 'ramdisk' }, timeout: '10m', retries: 0 }] },
  'root',
);

/**
 * A machine of the site whose state workflow runs and stays running (a wait for a ramdisk
 * that never joins); its row names that workflow, the control plane's own record of it (a
 * workflow it did not start gets no step secrets, test/integration/bmc-access-forged.test.ts).
 */
export async function startHoldingRun(t: TestControlPlane, siteId: string) {
  const nodeId = newId('node');
  const workflowId = `node:${nodeId}:ledger:1`;
  await t.cp.db.node.create({ data: { id: nodeId, tenantId: 'root', siteId, role: 'host', workflowId } });
  const handle = await t.cp.temporal.workflow.start('provision', {
    workflowId,
    taskQueue: t.config.controlQueue,
    args: [holdingPlan, { tenantId: 'root', nodeId, siteId, provisionState: 'inspecting', labels: {} }],
  });
  return { nodeId, workflowId, handle };
}

export async function startSharedLedger(): Promise<SharedLedgerFixture> {
  const t = await startTestControlPlane();
  const site = await t.root.call<{ id: string }>('POST', '/v1/sites', {
    tenantId: 'root',
    kind: 'shared',
    region: 'lab-ledger',
    idempotencyKey: 'ledger-site',
  });
  const { token } = await t.root.call<{ token: string }>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
  const dir = workDir();
  const csr = newKeyAndCsr(dir, 'site', 'ec');
  const joined = await t.anonymous.call<{ certificateChain: string[] }>('POST', '/v1/join', { token, csr });
  const certificate = joined.certificateChain[0] as string;
  const signer: Signer = { key: createPrivateKey(readFileSync(path.join(dir, 'site.key'), 'utf8')), certificatePem: () => certificate };

  const { nodeId, workflowId, handle } = await startHoldingRun(t, site.id);
  const client = new ControlPlaneClient(t.cp.url);
  return {
    t,
    workflowId,
    operationId: (name) => `${workflowId}/${name}`,
    ledger: () => new RemoteOperationLedger(client, signer, { workflowId, target: { nodeId } }),
    close: async () => {
      await handle.terminate('test done').catch(() => undefined);
      await t.close();
    },
  };
}
