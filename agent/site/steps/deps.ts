// What the site agent's step activities are given.
import type { BlockList } from 'node:net';
import type { StepInput } from '../../../core/plan';
import type { OperationLedger } from '../../bmc/operations';
import type { BootSecrets } from '../../boot/boot-secrets';
import type { BootEntryStore } from '../../boot/entries';
import type { ControlPlaneClient } from '../../common/control-plane-client';
import type { AgentIdentity } from '../../common/identity';
import type { AgentLog } from '../../common/log';
import type { SessionState } from '../session';

export interface SiteStepDeps {
  client: ControlPlaneClient;
  signer: AgentIdentity;
  /** The BMC operation ledger for one step attempt (shared by the site's agents). */
  ledgerFor: (input: StepInput) => OperationLedger;
  log: AgentLog;
  bootEntries: BootEntryStore;
  /** The boot server's in-memory discovery tokens (forgotten with their entries). */
  bootSecrets?: BootSecrets;
  /** `[site] bmc_networks`: site.httpProxy never reaches into them. */
  bmcNetworks: BlockList;
  session: () => SessionState;
  /** Every BMC host this agent drove (site.httpProxy refuses them). */
  drivenBmcHosts: Set<string>;
  /** A cache URL under a one-digest grant for a verified cached copy (media.insert), or undefined. */
  cachedMediaUrl?: (sha256: string) => string | undefined;
  /** [quorum] pinned_policies: destructive kinds run only in an approved batch (agent/common/quorum-check.ts). */
  quorumPins?: readonly string[];
}

export type SiteStep = (input: StepInput) => Promise<unknown>;
