// What the ramdisk's step activities are given.
import type { KeyObject } from 'node:crypto';
import type { StepInput } from '../../../core/plan';
import type { ControlPlaneClient } from '../../common/control-plane-client';
import type { AgentLog } from '../../common/log';
import type { RamdiskHardware } from '../hardware';

export interface RamdiskStepDeps {
  nodeId: string;
  key: KeyObject;
  certificatePem: () => string;
  hardware: RamdiskHardware;
  /** CA certificates this ramdisk trusts for image sources beyond the system's. */
  trustedCaPems?: readonly string[];
  /** The site agent's image cache under this boot's grant (if.cache); deploy.image tries it before the source. */
  cacheUrl?: string;
  /** Signed requests to the control plane (the deploy's user data). */
  client: ControlPlaneClient;
  log: AgentLog;
  /** Progress for long steps (Temporal heartbeats); a no-op outside an activity. */
  heartbeat: (details: Record<string, unknown>) => void;
}

export type RamdiskStep = (input: StepInput) => Promise<unknown>;
