// The node agent's step kinds on node.<nodeId>: inventory.refresh (the machine's facts and
// the host state the converger reports) and diag.dcgm (a real dcgmi when installed, else
// the machine's own answer; node-signed either way, DRIVER_ERROR when a test failed).
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { signNodeResult } from '../../core/boot/node-signed';
import { IronflowError, parseWith } from '../../core/errors';
import type { JsonObject, StepInput } from '../../core/plan';
import { runDcgmi } from '../common/dcgm';
import type { HostConverger } from './host-converger';
import type { NodeMachine } from './machine';

export const NODE_STEP_KINDS = ['inventory.refresh', 'diag.dcgm'] as const;
export type NodeStepKind = (typeof NODE_STEP_KINDS)[number];
export type NodeStep = (input: StepInput) => Promise<unknown>;

export interface NodeStepDeps {
  nodeId: string;
  key: KeyObject;
  machine: NodeMachine;
  converger: HostConverger;
  /** Where dcgmi is looked up (tests point it at a missing binary to use the machine's answer). */
  dcgmiBinary?: string;
}

export function createNodeSteps(deps: NodeStepDeps): Record<NodeStepKind, NodeStep> {
  return {
    async 'inventory.refresh'() {
      const { machine } = deps;
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
      const { level } = parseWith(z.object({ level: z.number().int().min(1).max(4).default(1) }).strict(), input.with);
      const real = await runDcgmi(level, deps.dcgmiBinary);
      const report = real ?? (await deps.machine.dcgm?.(level));
      if (!report) throw new IronflowError('UNSUPPORTED', 'no dcgmi on this node and the machine reports no DCGM result; install datacenter-gpu-manager', {});
      const result = { nodeId: deps.nodeId, workflowId: input.workflowId, level, tests: report.tests, source: real ? 'dcgmi' : 'machine' } as unknown as JsonObject;
      const signed = signNodeResult(deps.key, 'ironflow-dcgm-v1', result);
      const failed = report.tests.filter((t) => !t.passed);
      if (failed.length > 0) throw new IronflowError('DRIVER_ERROR', `DCGM level ${level}: ${failed.map((t) => t.name).join(', ')} failed`, { reason: 'dcgm-failed', failed: failed.map((t) => t.name) });
      return { ...result, passed: true, signed: { ...signed } };
    },
  };
}
