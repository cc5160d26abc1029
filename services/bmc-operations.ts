// The BMC operation ledger a site's agents share: what each BMC command sent under an
// operation id came to, so a step retried on, or re-routed to, another agent of the site
// reuses the outcome instead of sending again (spec 001: "a power cycle the dead agent
// already ran is reused, not sent again"). Only a site agent of the machine's own site may
// read or write, only for a running workflow of that machine and that workflow's operation
// ids. Writes are compare-and-set on the state the agent last saw, so two agents can never
// both record that they are about to send the same command.
import { machineOfRunningStep, refusalTenant, type BmcAccessDeps } from './bmc-access';
import type { BmcAccessRequest } from '../core/schemas/agent-bmc-access';
import { operationIdBelongsTo } from '../core/bmc-operation-id';
import { isUniqueViolation, Prisma, type DbOrTx } from './db';
import { IronflowError } from '../core/errors';
import { recordRefusal, refusal } from './joins/refusal';
import type { AuthenticatedAgent } from './pki/authenticate-agent';
import type { BmcOperationAnswer, BmcOperationGet, BmcOperationPut, LedgerState, OperationRecordInput } from '../core/schemas/agent-bmc-operations';
import { executeStatement, queryRows } from './raw-statements';

/** The table's states: sent (outcome not recorded), succeeded, refused (the BMC said no), unknown (may have reached the BMC). */
export type BmcOperationState = 'sent' | 'succeeded' | 'refused' | 'unknown';

interface StoredError {
  code: string;
  message: string;
  outcomeUnknown: boolean;
}

function stateOf(record: OperationRecordInput): BmcOperationState {
  if (record.state === 'started') return 'sent';
  if (record.state === 'succeeded') return 'succeeded';
  return record.error?.outcomeUnknown ? 'unknown' : 'refused';
}

function ledgerStateOf(state: string): LedgerState {
  if (state === 'sent') return 'started';
  if (state === 'succeeded') return 'succeeded';
  return 'failed';
}

interface Row {
  id: string;
  agentNodeId: string;
  command: string;
  bmc: string;
  state: string;
  result: Prisma.JsonValue | null;
  error: Prisma.JsonValue | null;
  startedAt: Date;
  finishedAt: Date | null;
  updatedAt: Date;
}

function answerOf(row: Row | null): BmcOperationAnswer {
  if (!row) return { operation: null };
  return {
    operation: {
      operationId: row.id,
      kind: row.command,
      bmc: row.bmc,
      state: ledgerStateOf(row.state),
      ...(row.result !== null ? { result: row.result as OperationRecordInput['result'] } : {}),
      ...(row.error !== null ? { error: row.error as unknown as StoredError } : {}),
      startedAt: row.startedAt.toISOString(),
      ...(row.finishedAt ? { finishedAt: row.finishedAt.toISOString() } : {}),
      agentNodeId: row.agentNodeId,
      updatedAt: row.updatedAt.toISOString(),
    },
  };
}

/** The machine of the step, or a refusal (recorded as a security event). */
async function authorize(deps: BmcAccessDeps, agent: AuthenticatedAgent, input: BmcAccessRequest & { operationId: string }) {
  try {
    if (!operationIdBelongsTo(input.operationId, input.workflowId)) {
      throw refusal(
        'PERMISSION_DENIED',
        'operation-of-another-workflow',
        `operation ${input.operationId} is not one of workflow ${input.workflowId}'s (ids start with the workflow id)`,
      );
    }
    return await machineOfRunningStep(deps, agent, input);
  } catch (error) {
    return recordRefusal(deps.db, 'security.bmc-operation.refused', error, {
      tenantId: await refusalTenant(deps.db, agent, input.nodeId),
      subjectId: input.nodeId,
      data: { nodeId: input.nodeId, workflowId: input.workflowId, operationId: input.operationId, agentNodeId: agent.nodeId, siteId: agent.siteId },
    });
  }
}

export async function getBmcOperation(deps: BmcAccessDeps, agent: AuthenticatedAgent, input: BmcOperationGet): Promise<BmcOperationAnswer> {
  const node = await authorize(deps, agent, input);
  const row = await findOperation(deps.db, input.operationId);
  // A record of another machine under this id is no business of this step.
  return answerOf(row && row.nodeId === node.id ? row : null);
}

export async function putBmcOperation(deps: BmcAccessDeps, agent: AuthenticatedAgent, input: BmcOperationPut): Promise<BmcOperationAnswer> {
  const record = input.operation;
  const node = await authorize(deps, agent, { ...input, operationId: record.operationId });
  const state = stateOf(record);
  const startedAt = new Date(record.startedAt);
  const row = await findOperation(deps.db, record.operationId);
  if (!row) {
    if (input.expected !== 'none') throw moved(record.operationId, 'none', input.expected, null);
    try {
      await insertOperation(deps.db, {
        id: record.operationId,
        nodeId: node.id,
        siteId: node.siteId,
        workflowId: input.workflowId,
        agentNodeId: agent.nodeId,
        state,
        startedAt,
        record,
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw moved(record.operationId, 'another agent’s record', input.expected, null);
      throw error;
    }
    return answerOf(await findOperation(deps.db, record.operationId));
  }
  if (row.nodeId !== node.id || row.command !== record.kind || row.bmc !== record.bmc) {
    throw new IronflowError(
      'CONFLICT',
      `operation ${record.operationId} was ${row.command} on ${row.bmc}, not ${record.kind} on ${record.bmc}; use a new operation id`,
      { operationId: record.operationId },
    );
  }
  // The same write again (an answer lost on the way back) is accepted as it is.
  const replay = row.agentNodeId === agent.nodeId && row.state === state && row.startedAt.getTime() === startedAt.getTime();
  if (ledgerStateOf(row.state) !== input.expected && !replay) throw moved(record.operationId, ledgerStateOf(row.state), input.expected, row.agentNodeId);
  // Compare-and-set on the state and write time this agent read.
  const result = record.result === undefined ? Prisma.empty : Prisma.sql`, "result" = ${JSON.stringify(record.result)}`;
  const error = record.error === undefined ? Prisma.empty : Prisma.sql`, "error" = ${JSON.stringify(record.error)}`;
  const updated = await executeStatement(
    deps.db,
    Prisma.sql`UPDATE "BmcOperation" SET "agentNodeId" = ${agent.nodeId}, "state" = ${state}, "startedAt" = ${startedAt},
      "finishedAt" = ${record.finishedAt ? new Date(record.finishedAt) : null}, "updatedAt" = ${new Date()}${result}${error}
      WHERE "id" = ${row.id} AND "state" = ${row.state} AND "updatedAt" = ${row.updatedAt}`,
  );
  if (updated !== 1) throw moved(record.operationId, 'changed meanwhile', input.expected, null);
  return answerOf(await findOperation(deps.db, row.id));
}

/**
 * A new record, raw: two of every BMC command's requests write the ledger, and Prisma compiling
 * the model's create and update cost more than the statements (bench/README.md).
 */
async function insertOperation(
  db: DbOrTx,
  r: {
    id: string;
    nodeId: string;
    siteId: string;
    workflowId: string;
    agentNodeId: string;
    state: BmcOperationState;
    startedAt: Date;
    record: OperationRecordInput;
  },
): Promise<void> {
  const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
  await executeStatement(
    db,
    Prisma.sql`INSERT INTO "BmcOperation" ("id", "nodeId", "siteId", "workflowId", "agentNodeId", "command", "bmc", "state", "result", "error", "startedAt", "finishedAt", "updatedAt")
      VALUES (${r.id}, ${r.nodeId}, ${r.siteId}, ${r.workflowId}, ${r.agentNodeId}, ${r.record.kind}, ${r.record.bmc}, ${r.state}, ${json(r.record.result)}, ${json(r.record.error)},
        ${r.startedAt}, ${r.record.finishedAt ? new Date(r.record.finishedAt) : null}, ${new Date()})`,
  );
}

/** The ledger's record under this id, read raw: each of a BMC command's requests reads it. */
async function findOperation(db: DbOrTx, operationId: string): Promise<(Row & { nodeId: string }) | null> {
  const [row] = await queryRows<Row & { nodeId: string }>(
    db,
    Prisma.sql`SELECT "id", "nodeId", "agentNodeId", "command", "bmc", "state", "result", "error", "startedAt", "finishedAt", "updatedAt" FROM "BmcOperation" WHERE "id" = ${operationId}`,
  );
  return row ?? null;
}

function moved(operationId: string, now: string, expected: string, by: string | null): IronflowError {
  return new IronflowError(
    'CONFLICT',
    `operation ${operationId} is ${now}${by ? ` (written by agent ${by})` : ''}, not ${expected} as this agent last read it; the step reads it again on retry`,
    { operationId, expected, reason: 'operation-moved' },
  );
}
