// The node agent's step kinds on node.<nodeId>: inventory.refresh (the machine's facts and
// the host state the converger reports), diag.dcgm (attested, with the source that
// produced it: agent/common/dcgm.ts; DRIVER_ERROR when a test failed), acceptance.check and
// gpu.reset (the host's nvidia-smi: agent/node/nvidia-smi.ts).
import type { KeyObject } from 'node:crypto';
import { IronflowError, parseWith } from '../../core/errors';
import type { StepInput } from '../../core/plan';
import { sameProductUuid } from '../../core/product-uuid';
import { inventoryWithSchema, type NodeInventoryOutput } from '../../core/schemas/inventory';
import { stepsServedOn, type StepsOf } from '../../core/steps/builtin';
import { dcgmStepResult } from '../common/dcgm';
import { runAcceptanceCheck } from './acceptance-checks';
import type { HostConverger } from './host-converger';
import type { HostRoot } from './host-root';
import type { NodeMachine } from './machine';
import { resetGpus } from './nvidia-smi';

/** The registry's steps served on `node` (core/steps): createNodeSteps is typed by them. */
export const NODE_STEP_KINDS = stepsServedOn('node');
export type NodeStepKind = StepsOf<'node'>;
export type NodeStep = (input: StepInput) => Promise<unknown>;

export interface NodeStepDeps {
  nodeId: string;
  key: KeyObject;
  /** The agent's current certificate (renewals replace it): what attested results are signed under. */
  certificatePem: () => string;
  machine: NodeMachine;
  converger: HostConverger;
  /** The host the agent manages (where gpu.reset finds nvidia-smi). */
  root: HostRoot;
  /** Where dcgmi is looked up on a real host (default: dcgmi on the PATH). */
  dcgmiBinary?: string;
}

export function createNodeSteps(deps: NodeStepDeps): Record<NodeStepKind, NodeStep> {
  return {
    async 'inventory.refresh'(input) {
      const { machine } = deps;
      // The OS's DMI UUID against the enrolled one, as the ramdisk checks it (NICs: not reported by this agent).
      const { expect } = parseWith(inventoryWithSchema, input.with);
      if (expect?.productUuid && machine.productUuid && !sameProductUuid(expect.productUuid, machine.productUuid)) {
        throw new IronflowError('DRIVER_ERROR', `this machine's product UUID is not the enrolled one`, { reason: 'machine-identity-mismatch' });
      }
      return {
        sections: {
          system: { hostname: machine.hostname, productUuid: machine.productUuid, arch: machine.arch, cpus: machine.cpus, memoryBytes: machine.memoryBytes },
          gpus: machine.gpus.map((g) => ({ ...g })),
          host: deps.converger.state() ?? null,
        },
        collectedAt: new Date().toISOString(),
      };
    },

    async 'diag.dcgm'(input) {
      return dcgmStepResult(deps, deps.nodeId, input, deps.machine, deps.dcgmiBinary);
    },

    /** One of the pool's acceptance checks on an adopted machine (agent/node/acceptance-checks.ts). */
    async 'acceptance.check'(input) {
      return runAcceptanceCheck(input, deps.machine);
    },

    /** Every GPU nvidia-smi sees, reset; UNSUPPORTED naming the host without it. */
    async 'gpu.reset'() {
      return resetGpus(deps.root, deps.machine.hostname);
    },
  };
}
