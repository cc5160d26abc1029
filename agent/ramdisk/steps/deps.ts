// What the ramdisk's step activities are given.
import type { KeyObject } from 'node:crypto';
import type { StepInput } from '../../../core/plan';
import type { AgentLog } from '../../site/log';
import type { RamdiskHardware } from '../hardware';

export interface RamdiskStepDeps {
  nodeId: string;
  key: KeyObject;
  certificatePem: () => string;
  hardware: RamdiskHardware;
  log: AgentLog;
  /** Progress for long steps (Temporal heartbeats); a no-op outside an activity. */
  heartbeat: (details: Record<string, unknown>) => void;
}

export type RamdiskStep = (input: StepInput) => Promise<unknown>;
