// Admission of a join: one attestor per join-token role, behind one interface. An
// attestor decides inside the join's transaction, consuming what it must (a token use)
// there, so a refused or failed join consumes nothing.
import type { Tx } from '../../services/db';
import type { ParsedCsr } from '../../services/pki/csr';
import type { NodeCa } from '../../services/pki/node-ca';
import type { JoinInput } from '../schemas/join';

export interface JoinTokenRecord {
  id: string;
  tenantId: string;
  siteId: string;
  poolId: string | null;
  nodeId: string | null;
  role: string;
  usesLeft: number;
  expiresAt: Date;
  revokedAt: Date | null;
  /** Discovery tokens: the MAC and the workflow they are bound to. */
  expectMac?: string | null;
  workflowId?: string | null;
}

export interface AttestationRequest {
  tx: Tx;
  token: JoinTokenRecord;
  csr: ParsedCsr;
  now: Date;
  /** The node CA: attestors that check other agents' certificates (discovery) use it. */
  ca?: NodeCa;
  /** The joiner's evidence beyond the token (a ramdisk's discovery assertion and MACs). */
  discovery?: JoinInput['discovery'];
  /** Whether a workflow runs now and is about this node (asked of Temporal). */
  workflowRuns?: (workflowId: string, nodeId: string) => Promise<boolean>;
  /** The discovery attestor's operator approval mode (spec 001): never (default), unknown-machines, always. */
  discoveryApproval?: DiscoveryApproval;
  /** The node id the joiner says it is (an installed OS's --node-id). */
  claimedNodeId?: string;
}

export const discoveryApprovalModes = ['never', 'unknown-machines', 'always'] as const;
export type DiscoveryApproval = (typeof discoveryApprovalModes)[number];

export interface Admission {
  tenantId: string;
  siteId: string;
  poolId: string | null;
  /** The node the agent joins as: new, or an existing one the token names. */
  nodeId: string;
  /** Whether `nodeId` is a new node the join creates. */
  newNode: boolean;
  role: string;
  /** A new metal node's provision state and its first state workflow (an adopted machine: adopting). */
  provision?: { state: string; workflowId: string | null };
}

export interface Attestor {
  /** The join-token role it admits. */
  role: string;
  /** Admits the join or throws a refusal (services/joins/refusal.ts). */
  admit(request: AttestationRequest): Promise<Admission>;
}
