// metal.enroll: creates the node in `enrolling` with its BMC (credentials sealed in the
// secret store in the same transaction, as JSON { username, password }), pool, driver
// bindings (three layers), MACs and product UUID when known. Decided on the pool.
import type { Node } from '../../generated/prisma-sqlite/client';
import type { Db } from '../db';
import { appendEvent } from '../events';
import { newId } from '../ids';
import { findOwnedPool } from '../../core/pools/pool-lookup';
import type { SecretStore } from '../secret-store';
import type { MetalEnrollInput } from '../../core/schemas/metal';
import { poolPolicySchema } from '../../core/schemas/pools';
import { resolveDriverBindings } from '../../core/metal/hardware-profiles';
import { stateWorkflowId } from '../temporal/workflow-ids';

export const bmcSecretPurpose = (nodeId: string): string => `bmc:${nodeId}`;

export async function enrollNode(db: Db, secrets: SecretStore, input: MetalEnrollInput): Promise<Node> {
  const nodeId = newId('node');
  return db.$transaction(async (tx) => {
    const pool = await findOwnedPool(tx, input.tenantId, input.poolId);
    const policy = poolPolicySchema.parse(pool.policy);
    const hardwareProfile = input.hardwareProfile ?? policy.hardwareProfile;
    const credentialsRef = await secrets.put(tx, {
      tenantId: input.tenantId,
      purpose: bmcSecretPurpose(nodeId),
      value: JSON.stringify({ username: input.bmc.username, password: input.bmc.password }),
    });
    const driverBindings = resolveDriverBindings({
      bmc: { driver: input.bmc.driver, address: input.bmc.address, credentialsRef },
      ...(hardwareProfile ? { hardwareProfile, hardwareProfilePath: input.hardwareProfile ? 'hardwareProfile' : 'poolId' } : {}),
      overrides: input.drivers ?? {},
    });
    const workflowId = stateWorkflowId(nodeId, 'enrolling', 1);
    const node = await tx.node.create({
      data: {
        id: nodeId,
        tenantId: input.tenantId,
        siteId: pool.siteId,
        poolId: pool.id,
        role: 'machine',
        provisionState: 'enrolling',
        power: 'unknown',
        workflowId,
        workflowSeq: 1,
        hardwareProfile: hardwareProfile ?? null,
        driverBindings: driverBindings as object,
        bmcDriver: input.bmc.driver,
        bmcAddress: input.bmc.address,
        bmcCredentialsRef: credentialsRef,
        bmcCaPem: input.bmc.caPem ?? null,
        macs: [...new Set(input.macs ?? [])],
        macSource: input.macs?.length ? 'operator' : null,
        productUuid: input.productUuid?.toLowerCase() ?? null,
        arch: input.arch,
        uefi: input.uefi,
        labels: (input.labels ?? {}) as object,
      },
    });
    await appendEvent(tx, {
      tenantId: input.tenantId,
      type: 'node.enrolled',
      subjectId: nodeId,
      data: { poolId: pool.id, siteId: pool.siteId, bmc: { driver: input.bmc.driver, address: input.bmc.address }, hardwareProfile: hardwareProfile ?? null },
    });
    await appendEvent(tx, { tenantId: input.tenantId, type: 'node.provision.enrolling', subjectId: nodeId, data: { from: null, to: 'enrolling', workflowId } });
    return node;
  });
}
