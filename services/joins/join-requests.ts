// Pending discovery joins (spec 001, approval modes): a deferred join becomes a JoinRequest
// (24 h) that an operator approves or rejects; the ramdisk retries with the same CSR and
// consumes an approval once. A request is keyed by the token and the CSR's key, so a retry
// finds its own request and another key cannot ride on an approval.
import { createHash } from 'node:crypto';
import type { Db, DbOrTx } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { derivedId } from '../ids';
import { authorizeTenantObject } from '../../core/joins/join-request-access';

export const JOIN_REQUEST_TTL_MS = 24 * 3_600_000;

export interface JoinRequestDraft {
  tenantId: string;
  siteId: string;
  tokenId: string;
  nodeId: string | null;
  workflowId: string | null;
  mac: string;
  spkiDer: Uint8Array;
  reason: string;
}

export const joinRequestIdFor = (tokenId: string, spkiDer: Uint8Array): string =>
  derivedId('joinRequest', tokenId, createHash('sha256').update(spkiDer).digest('hex'));

/** A deferred join: refused now, written as an open request after the join's transaction rolled back. */
export class DeferredJoin extends IronflowError {
  constructor(readonly draft: JoinRequestDraft) {
    const id = joinRequestIdFor(draft.tokenId, draft.spkiDer);
    super(
      'INVALID_STATE',
      `this discovery join waits for an operator's approval (join request ${id}: ironflow join-requests approve ${id}); the ramdisk retries`,
      {
        reason: 'approval-pending',
        joinRequestId: id,
      },
    );
  }

  async record(db: Db, now = new Date()): Promise<void> {
    const id = joinRequestIdFor(this.draft.tokenId, this.draft.spkiDer);
    const existing = await db.joinRequest.findUnique({ where: { id } });
    if (existing) return;
    const detail = { tokenId: this.draft.tokenId, nodeId: this.draft.nodeId, workflowId: this.draft.workflowId, reason: this.draft.reason };
    await db.$transaction(async (tx) => {
      await tx.joinRequest.create({
        data: {
          id,
          tenantId: this.draft.tenantId,
          siteId: this.draft.siteId,
          status: 'open',
          mac: this.draft.mac,
          detail,
          expiresAt: new Date(now.getTime() + JOIN_REQUEST_TTL_MS),
        },
      });
      await appendEvent(tx, {
        tenantId: this.draft.tenantId,
        type: 'security.join-request.opened',
        subjectId: id,
        data: { ...detail, siteId: this.draft.siteId, mac: this.draft.mac },
      });
    });
  }
}

export type JoinRequestOutcome = 'approved' | 'none';

/**
 * Inside a join's transaction: consumes the approval of this (token, key) when there is
 * one ('approved'), answers 'none' when there is no request yet, and refuses a pending,
 * rejected, expired or already used one.
 */
export async function consumeApproval(tx: DbOrTx, tokenId: string, spkiDer: Uint8Array, now: Date): Promise<JoinRequestOutcome> {
  const id = joinRequestIdFor(tokenId, spkiDer);
  const request = await tx.joinRequest.findUnique({ where: { id } });
  if (!request) return 'none';
  const refuse = (reason: string, message: string) =>
    new IronflowError(reason === 'approval-pending' ? 'INVALID_STATE' : 'PERMISSION_DENIED', message, { reason, joinRequestId: id });
  if (request.status === 'open' && request.expiresAt.getTime() <= now.getTime())
    throw refuse('join-request-expired', `join request ${id} expired undecided; boot the machine again`);
  if (request.status === 'open') throw refuse('approval-pending', `join request ${id} still waits for an operator's approval`);
  if (request.status === 'rejected') throw refuse('join-rejected', `an operator rejected join request ${id}`);
  if (request.status !== 'approved') throw refuse('approval-used', `join request ${id} was ${request.status}; an approval admits one join`);
  const used = await tx.joinRequest.updateMany({ where: { id, status: 'approved' }, data: { status: 'used' } });
  if (used.count !== 1) throw refuse('approval-used', `join request ${id} was already used`);
  return 'approved';
}

export interface JoinRequestView {
  id: string;
  tenantId: string;
  siteId: string;
  status: string;
  mac: string | null;
  nodeId: string | null;
  workflowId: string | null;
  reason: string | null;
  expiresAt: string;
  decidedAt: string | null;
  createdAt: string;
}

type Row = NonNullable<Awaited<ReturnType<Db['joinRequest']['findUnique']>>>;

function view(row: Row, now: Date): JoinRequestView {
  const detail = (row.detail ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    id: row.id,
    tenantId: row.tenantId,
    siteId: row.siteId,
    status: row.status === 'open' && row.expiresAt.getTime() <= now.getTime() ? 'expired' : row.status,
    mac: row.mac,
    nodeId: text(detail.nodeId),
    workflowId: text(detail.workflowId),
    reason: text(detail.reason),
    expiresAt: row.expiresAt.toISOString(),
    decidedAt: row.decidedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export async function listJoinRequests(
  db: Db,
  query: { tenantId: string; siteId?: string; status?: string; limit: number },
  now = new Date(),
): Promise<JoinRequestView[]> {
  const rows = await db.joinRequest.findMany({
    where: { tenantId: query.tenantId, ...(query.siteId ? { siteId: query.siteId } : {}) },
    orderBy: { createdAt: 'desc' },
    take: Math.min(query.limit, 500),
  });
  return rows.map((r) => view(r, now)).filter((r) => !query.status || r.status === query.status);
}

export async function decideJoinRequest(
  db: Db,
  input: { tenantId: string; id: string; decision: 'approve' | 'reject'; callerId?: string },
  now = new Date(),
): Promise<JoinRequestView> {
  return db.$transaction(async (tx) => {
    const row = await tx.joinRequest.findUnique({ where: { id: input.id } });
    authorizeTenantObject(row, input.tenantId, input.id);
    const current = view(row, now);
    if (current.status !== 'open')
      throw new IronflowError('INVALID_STATE', `join request ${input.id} is ${current.status}; only an open request can be decided`, {
        status: current.status,
      });
    const status = input.decision === 'approve' ? 'approved' : 'rejected';
    const updated = await tx.joinRequest.update({ where: { id: input.id }, data: { status, decidedAt: now } });
    await appendEvent(tx, {
      tenantId: row.tenantId,
      type: `security.join-request.${status}`,
      subjectId: row.id,
      data: { siteId: row.siteId, mac: row.mac, callerId: input.callerId ?? null },
    });
    return view(updated, now);
  });
}
