// Admission of a join: one attestor per join-token role, behind one interface. An
// attestor decides inside the join's transaction, consuming what it must (a token use)
// there, so a refused or failed join consumes nothing.
import type { Tx } from '../db';
import type { ParsedCsr } from '../pki/csr';

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
}

export interface AttestationRequest {
  tx: Tx;
  token: JoinTokenRecord;
  csr: ParsedCsr;
  now: Date;
}

export interface Admission {
  tenantId: string;
  siteId: string;
  poolId: string | null;
  /** The node the agent joins as: new, or an existing one the token names. */
  nodeId: string;
  /** Whether `nodeId` is a new node the join creates. */
  newNode: boolean;
  role: string;
}

export interface Attestor {
  /** The join-token role it admits. */
  role: string;
  /** Admits the join or throws a refusal (core/joins/refusal.ts). */
  admit(request: AttestationRequest): Promise<Admission>;
}
