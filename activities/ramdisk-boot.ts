// metal.ensureRamdisk's database work (the step itself is workflow code:
// workflows/provision/ensure-ramdisk.ts). Each activity is one short read or write, so no
// worker slot is held while a machine boots: read the node, forget a ramdisk session before
// a power cycle, record the cycle's power and the boot, mint the discovery tokens and build
// the boot entries, one look at the PXE discovery of a machine with no known MAC, and the
// queue of the ramdisk a machine runs (each boot's ramdisk serves a queue of its own).
import type { AgentSession, Node } from '../generated/prisma-sqlite/client';
import { isConnected } from '../core/agent-queues';
import { BOOT_ENTRY_TTL_MS, bootArchitectureFor, type BootEntry } from '../core/boot/boot-entry';
import { IronflowError } from '../core/errors';
import { discoveryTokenRef } from '../services/boot/discovery-tokens';
import { appendEvent } from '../services/events';
import { macsOf } from '../services/metal/confirm-mac';
import { findNodeById } from '../services/metal/node-reads';
import { findPxeCandidate, isUsableProductUuid, type NoCandidateReason } from '../services/metal/pxe-candidate';
import type { ActivityDeps } from './deps';
import { asStep } from './step-failure';
import { poolPolicyOf } from '../services/pools/pool-policy';

export interface RamdiskBootNode {
  tenantId: string;
  siteId: string;
  productUuid: string | null;
  /** A product UUID that names one machine: what PXE discovery matches sightings by. */
  usableProductUuid: boolean;
  macs: string[];
  /** The pool's policy.trustProvisioningNetwork: a discovered MAC is bound at once. */
  trustProvisioningNetwork: boolean;
}

export interface RamdiskBootState {
  node: RamdiskBootNode;
  /** A fresh ramdisk session (runningRamdiskQueue). */
  ramdiskSession: boolean;
  /** The queue that ramdisk serves (null when none runs). */
  ramdiskQueue: string | null;
}

/**
 * The queue of the ramdisk a fresh ramdisk session says the machine runs, while the machine is
 * not recorded powered off: a power-off (commissioning's last step, a release) ends the
 * ramdisk without a goodbye, and its session still looks fresh for a few seconds after.
 */
function runningRamdiskQueue(session: AgentSession | null, node: Pick<Node, 'power'>): string | null {
  if (!session || session.role !== 'ramdisk' || node.power === 'off') return null;
  return isConnected(session.lastSeenAt, Date.now(), 'ramdisk') ? session.taskQueue : null;
}

/** One look at the discovery of a machine's PXE MAC. */
export type PxeDiscoveryLook =
  | { kind: 'known'; macs: string[]; discovered: boolean }
  | { kind: 'waiting'; reason: NoCandidateReason | 'metal.confirmMac' }
  /** The node changed meanwhile (an operator's metal.confirmMac): look again at once. */
  | { kind: 'changed' };

export function createRamdiskBootActivities(deps: ActivityDeps) {
  return {
    async 'metal.ensureRamdisk.read'(input: { nodeId: string }): Promise<RamdiskBootState> {
      return asStep(async () => {
        const [node, session] = await Promise.all([findNodeById(deps.db, input.nodeId), deps.db.agentSession.findUnique({ where: { nodeId: input.nodeId } })]);
        if (!node || node.deletedAt) throw new IronflowError('NOT_FOUND', `node ${input.nodeId} not found`, { nodeId: input.nodeId });
        const policy = await poolPolicyOf(deps.db, node.poolId);
        const ramdiskQueue = runningRamdiskQueue(session, node);
        return {
          node: {
            tenantId: node.tenantId,
            siteId: node.siteId,
            productUuid: node.productUuid,
            usableProductUuid: isUsableProductUuid(node.productUuid),
            macs: macsOf(node),
            trustProvisioningNetwork: policy?.trustProvisioningNetwork ?? false,
          },
          ramdiskSession: ramdiskQueue !== null,
          ramdiskQueue,
        };
      });
    },

    /** The queue of the ramdisk the machine runs now, for a run that did not boot it (a rescue's ramdisk, say); null when none runs. */
    async 'metal.ramdiskQueue'(input: { nodeId: string }): Promise<string | null> {
      const [node, session] = await Promise.all([
        deps.db.node.findUnique({ where: { id: input.nodeId }, select: { power: true } }),
        deps.db.agentSession.findUnique({ where: { nodeId: input.nodeId } }),
      ]);
      return node ? runningRamdiskQueue(session, node) : null;
    },

    /**
     * After a power-off: whatever ramdisk the machine ran is gone. After boot.pxeBoot, whose
     * power-on the new ramdisk may have beaten in answer to, only a session last seen before the
     * boot was sent (`lastSeenBefore`): a new ramdisk's beat moves its machine's row past it.
     */
    async 'metal.ensureRamdisk.forgetSession'(input: { nodeId: string; lastSeenBefore?: string }): Promise<void> {
      const seen = input.lastSeenBefore ? { lastSeenAt: { lt: new Date(input.lastSeenBefore) } } : {};
      await deps.db.agentSession.deleteMany({ where: { nodeId: input.nodeId, role: 'ramdisk', ...seen } });
    },

    /** After a power cycle: node.power is the last requested power, and the cycle leaves it on. */
    async 'metal.ensureRamdisk.poweredOn'(input: { nodeId: string }): Promise<void> {
      await deps.db.node.update({ where: { id: input.nodeId }, data: { power: 'on' } });
    },

    /** One boot entry per PXE MAC, each with its discovery token (minted once per workflow and MAC, by reference). */
    async 'metal.ensureRamdisk.bootEntries'(input: { nodeId: string; workflowId: string; macs: string[] }): Promise<BootEntry[]> {
      return asStep(async () => {
        const node = await findNodeById(deps.db, input.nodeId);
        if (!node || node.deletedAt) throw new IronflowError('NOT_FOUND', `node ${input.nodeId} not found`, { nodeId: input.nodeId });
        const notAfter = new Date(Date.now() + BOOT_ENTRY_TTL_MS).toISOString();
        const entries: BootEntry[] = [];
        for (const mac of input.macs) {
          const { ref } = await discoveryTokenRef(deps.db, deps.secrets, {
            tenantId: node.tenantId,
            siteId: node.siteId,
            poolId: node.poolId,
            nodeId: node.id,
            workflowId: input.workflowId,
            mac,
          });
          entries.push({
            mac,
            productUuid: node.productUuid?.toLowerCase() ?? null,
            arch: bootArchitectureFor(node.arch, node.uefi),
            nodeId: node.id,
            workflowId: input.workflowId,
            tokenRef: ref,
            notAfter,
          });
        }
        return entries;
      });
    },

    async 'metal.ensureRamdisk.recordBoot'(input: {
      tenantId: string;
      nodeId: string;
      workflowId: string;
      agentNodeId: string;
      macs: string[];
    }): Promise<void> {
      await appendEvent(deps.db, {
        tenantId: input.tenantId,
        type: 'node.boot.ramdisk',
        subjectId: input.nodeId,
        data: { workflowId: input.workflowId, agentNodeId: input.agentNodeId, macs: input.macs },
      });
    },

    /**
     * After the discovery boot: the MAC an operator confirmed (any door), or the candidate
     * itself on a pool that trusts its provisioning network. A new candidate is published
     * once (node.discoveredMac, an event); the wait names its reason.
     */
    async 'metal.ensureRamdisk.discoverMac'(input: { nodeId: string; powerCommandAt: string; trusted: boolean }): Promise<PxeDiscoveryLook> {
      return asStep(async () => {
        const node = await deps.db.node.findUniqueOrThrow({ where: { id: input.nodeId } });
        const known = macsOf(node);
        if (known.length > 0) return { kind: 'known', macs: known, discovered: node.macSource === 'discovered' };
        if (!node.productUuid) throw new IronflowError('INVALID_STATE', `node ${node.id} lost its product UUID during PXE discovery`, { nodeId: node.id });
        const found = await findPxeCandidate(deps.db, {
          nodeId: node.id,
          siteId: node.siteId,
          productUuid: node.productUuid,
          powerCommandAt: new Date(input.powerCommandAt),
        });
        if (found.kind === 'none') return { kind: 'waiting', reason: found.reason };
        if (!input.trusted && node.discoveredMac === found.mac) return { kind: 'waiting', reason: 'metal.confirmMac' };
        const data = input.trusted ? { macs: [found.mac], macSource: 'discovered', discoveredMac: null } : { discoveredMac: found.mac };
        // Guarded: an operator's metal.confirmMac in between wins.
        const bound = await deps.db.$transaction(async (tx) => {
          const updated = await tx.node.updateMany({ where: { id: node.id, version: node.version }, data: { ...data, version: { increment: 1 } } });
          if (updated.count === 1) {
            await appendEvent(tx, {
              tenantId: node.tenantId,
              type: 'node.pxe-mac.discovered',
              subjectId: node.id,
              data: {
                nodeId: node.id,
                mac: found.mac,
                productUuid: found.productUuid,
                siteId: node.siteId,
                agentNodeId: found.agentNodeId,
                bound: input.trusted,
              },
            });
          }
          return updated.count === 1;
        });
        if (!bound) return { kind: 'changed' };
        return input.trusted ? { kind: 'known', macs: [found.mac], discovered: true } : { kind: 'waiting', reason: 'metal.confirmMac' };
      });
    },
  };
}
export type RamdiskBootActivities = ReturnType<typeof createRamdiskBootActivities>;
