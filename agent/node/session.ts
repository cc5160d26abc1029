// The node agent's session: a signed heartbeat at the interval the control plane asks for,
// certificate renewal when due, and the host section of each answer handed to the converger.
// Its first answered heartbeat says `opened` with the host's boot id: the agent is back
// (after a reboot, say), which the control plane tells the node's running workflows as the
// same agentJoined a join delivers (an `await: rejoin` step ends on it).
import { HEARTBEAT_ANSWER_WAIT_MS } from '../../core/agent-queues';
import type { SessionAnswer } from '../../core/schemas/agent-sessions';
import type { ControlPlaneClient } from '../common/control-plane-client';
import type { AgentIdentity } from '../common/identity';
import type { AgentLog } from '../common/log';
import type { CertificateRenewer } from '../common/renew';
import type { HostConverger } from './host-converger';

export class NodeSession {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failing = false;
  private beating: Promise<void>;
  private opened = false;
  lastAnswer: SessionAnswer | undefined;

  constructor(
    private readonly identity: AgentIdentity,
    private readonly client: ControlPlaneClient,
    private readonly renewer: CertificateRenewer,
    private readonly converger: HostConverger,
    private readonly log: AgentLog,
    private readonly bootId: string,
  ) {
    this.beating = this.beat();
  }

  /** Resolves after the first heartbeat was answered (or failed). */
  started(): Promise<void> {
    return this.beating;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.beating;
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    let interval = 1_000;
    try {
      const opening = this.opened ? {} : { opened: true, bootId: this.bootId };
      const answer = await this.client.signedPost<SessionAnswer>(
        this.identity,
        '/v1/agents/session',
        { agentVersion: 'ironflow-node/0.1', ...opening },
        HEARTBEAT_ANSWER_WAIT_MS,
      );
      this.lastAnswer = answer;
      this.opened = true;
      interval = answer.heartbeatIntervalMs;
      if (this.failing) this.log.info('control plane answers again');
      this.failing = false;
      this.converger.offer(answer.host?.spec);
      await this.renewer.renewIfDue(answer.certificate.renewAfter).catch((error: unknown) => {
        this.log.warn('certificate renewal failed; retrying with the next heartbeat', { error: (error as Error).message });
      });
    } catch (error) {
      if (!this.failing) this.log.warn('heartbeat failed', { error: (error as Error).message });
      this.failing = true;
    }
    if (!this.stopped) this.timer = setTimeout(() => (this.beating = this.beat()), interval);
  }
}
