// Discovery tokens for the boot server: fetched from the control plane with a signed
// request the first time a machine asks for its script, then reused if it asks again.
// Held in memory only (never on disk, never logged), and forgotten with the entry.
import type { BootEntry, RamdiskBootEntry } from '../../core/boot/boot-entry';
import type { BootSecretAnswer } from '../../core/schemas/agent-boot-secret';
import type { ControlPlaneClient, Signer } from '../common/control-plane-client';

export class BootSecrets {
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();
  private readonly pending = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly client: ControlPlaneClient,
    private readonly signer: Signer,
    private readonly onError: (entry: BootEntry, error: Error) => void = () => undefined,
  ) {}

  /** The entry's bearer, or undefined when the control plane does not give it (yet). */
  async tokenFor(entry: RamdiskBootEntry): Promise<string | undefined> {
    const cached = this.tokens.get(entry.tokenRef);
    if (cached && cached.expiresAt > Date.now()) return cached.token;
    let fetching = this.pending.get(entry.tokenRef);
    if (!fetching) {
      fetching = this.fetch(entry).finally(() => this.pending.delete(entry.tokenRef));
      this.pending.set(entry.tokenRef, fetching);
    }
    return fetching;
  }

  forget(entries: BootEntry[]): void {
    for (const entry of entries) if (entry.tokenRef) this.tokens.delete(entry.tokenRef);
  }

  private async fetch(entry: RamdiskBootEntry): Promise<string | undefined> {
    try {
      const answer = await this.client.signedPost<BootSecretAnswer>(this.signer, '/v1/agents/boot-secret', {
        nodeId: entry.nodeId,
        workflowId: entry.workflowId,
        ref: entry.tokenRef,
      });
      this.tokens.set(entry.tokenRef, { token: answer.token, expiresAt: Date.parse(answer.expiresAt) });
      return answer.token;
    } catch (error) {
      this.onError(entry, error as Error);
      return undefined;
    }
  }
}
