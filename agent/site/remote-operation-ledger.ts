// The BMC operation ledger shared by a site's agents, kept by the control plane
// (POST /v1/agents/bmc-operations/get|put, services/bmc-operations.ts). One instance serves one
// step attempt: every request names the step's machine and workflow, which is what the
// control plane authorizes, and each write says which state this attempt last saw, so a
// write over another agent's newer record is refused (CONFLICT) instead of lost. A command's
// first send writes `started` expecting no record, without reading first: refused, it reads.
//
// It replaces the per-agent file ledger in the site agent: a record only this agent can see
// would let a re-routed step send a power cycle a dead agent already sent. A request the
// control plane does not answer is sent again until the step's deadline (every read, and every
// write: the control plane accepts the same write again); past it the step fails, before the
// command is sent when the `started` record was never stored, and Temporal retries it.
import type { StepInput } from '../../core/plan';
import type { BmcOperationAnswer, LedgerState } from '../../core/schemas/agent-bmc-operations';
import type { OperationLedger, OperationRecord, StartedRecord } from '../bmc/operations';
import { isIronflowError } from '../../core/errors';
import type { ControlPlaneClient, Signer } from '../common/control-plane-client';
import { untilAnswered } from '../common/until-answered';
import { stepDeadline } from '../../services/step-deadline';
import { stepScope } from '../common/step-scope';

export class RemoteOperationLedger implements OperationLedger {
  /** The state this attempt last read or wrote, per operation id ('none': no record). */
  private readonly seen = new Map<string, 'none' | LedgerState>();
  private readonly deadline = stepDeadline();

  constructor(
    private readonly client: ControlPlaneClient,
    private readonly signer: Signer,
    private readonly step: { workflowId: StepInput['workflowId']; target: Pick<StepInput['target'], 'nodeId'> },
  ) {}

  async get(operationId: string): Promise<OperationRecord | null> {
    const answer = await untilAnswered(
      (timeoutMs) => this.client.signedPost<BmcOperationAnswer>(this.signer, '/v1/agents/bmc-operations/get', { ...this.scope(), operationId }, timeoutMs),
      this.patience(),
    );
    this.seen.set(operationId, answer.operation?.state ?? 'none');
    return answer.operation ? recordOf(answer.operation) : null;
  }

  async begin(record: StartedRecord): Promise<OperationRecord | null> {
    try {
      await this.write(record, 'none');
      return null;
    } catch (error) {
      // Refused as moved: the ledger holds a record (this command was sent before; records are
      // never deleted, so the read finds it). Read it.
      if (isIronflowError(error) && error.code === 'CONFLICT' && error.details.reason === 'operation-moved') return this.get(record.operationId);
      throw error;
    }
  }

  put(record: OperationRecord): Promise<void> {
    return this.write(record, this.seen.get(record.operationId) ?? 'none');
  }

  private async write(record: OperationRecord, expected: 'none' | LedgerState): Promise<void> {
    const body = { ...this.scope(), expected, operation: record };
    await untilAnswered(
      (timeoutMs) => this.client.signedPost<BmcOperationAnswer>(this.signer, '/v1/agents/bmc-operations/put', body, timeoutMs),
      this.patience(),
    );
    this.seen.set(record.operationId, record.state);
  }

  private patience() {
    return { deadline: this.deadline, firstTimeoutMs: this.client.timeoutMs };
  }

  private scope() {
    return stepScope(this.step);
  }
}

function recordOf(operation: NonNullable<BmcOperationAnswer['operation']>): OperationRecord {
  const { agentNodeId: _agent, updatedAt: _updated, ...record } = operation;
  return record as OperationRecord;
}
