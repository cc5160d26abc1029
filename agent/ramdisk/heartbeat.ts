// The ramdisk's session: a signed heartbeat at the interval the control plane asks for,
// so metal sees the machine's ramdisk as connected while it runs.
import { HEARTBEAT_ANSWER_WAIT_MS } from '../../core/agent-queues';
import type { SessionAnswer } from '../../core/schemas/agent-sessions';
import type { ControlPlaneClient, Signer } from '../common/control-plane-client';
import type { AgentLog } from '../common/log';

export class RamdiskHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failing = false;
  private first: Promise<void>;

  constructor(
    private readonly client: ControlPlaneClient,
    private readonly signer: Signer,
    private readonly log: AgentLog,
  ) {
    this.first = this.beat();
  }

  /** Resolves after the first heartbeat was answered (or failed). */
  started(): Promise<void> {
    return this.first;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    let interval = 5_000;
    try {
      const answer = await this.client.signedPost<SessionAnswer>(
        this.signer,
        '/v1/agents/session',
        { agentVersion: 'ironflow-ramdisk/0.1' },
        HEARTBEAT_ANSWER_WAIT_MS,
      );
      interval = answer.heartbeatIntervalMs;
      if (this.failing) this.log.info('control plane answers again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.log.warn('heartbeat failed', { error: (error as Error).message });
      this.failing = true;
      interval = 1_000;
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.beat(), interval);
  }
}
