// The ramdisk joins: a fresh key (in memory: a ramdisk keeps nothing), the node CA checked
// against the pin from its boot parameters BEFORE the token leaves the machine (a control
// plane of another installation, or a misdirected gateway_url, never sees it; over plain
// HTTP this guards against mistakes, not an active attacker: that needs the gateway's TLS),
// then POST /v1/join with the discovery token,
// the CSR and its evidence (the assertion, its MACs, its product UUID). A join deferred to
// an operator (approval-pending) is retried with the same key and CSR, and so is a transient
// failure (control plane unreachable, or its internal error such as a busy database): the
// join is one transaction, so a failed one consumed nothing.
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { IronflowError, isIronflowError } from '../../core/errors';
import { buildCsr } from '../../services/pki/csr-builder';
import { fromPem } from '../../core/pki/pem';
import type { JoinAnswer } from '../../core/schemas/join';
import { ControlPlaneUnreachable, type ControlPlaneClient } from '../common/control-plane-client';
import type { AgentLog } from '../common/log';
import type { BootParams } from './boot-params';
import type { RamdiskHardware } from './hardware';

interface RamdiskIdentity {
  key: KeyObject;
  answer: JoinAnswer;
  certificatePem(): string;
}

/** Transient failures retried, one second apart, before the boot is given up. */
const TRANSIENT_RETRIES = 10;

const caPinRefused = () =>
  new IronflowError('UNAUTHENTICATED', "the control plane's CA is not the one pinned in the boot parameters (if.ca); not trusting it", { reason: 'ca-pin' });

const caFingerprint = (pem: string) =>
  createHash('sha256')
    .update(fromPem(pem, ['CERTIFICATE'], 'ca'))
    .digest('hex');

export async function joinAsRamdisk(
  params: BootParams,
  hardware: RamdiskHardware,
  client: ControlPlaneClient,
  log: AgentLog,
  options: { approvalRetryMs?: number; signal?: AbortSignal } = {},
): Promise<RamdiskIdentity> {
  const { privateKey: key } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const csr = await buildCsr(key, 'ironflow-ramdisk');
  const body = {
    token: params.token,
    csr,
    discovery: {
      assertion: params.assertion,
      macs: hardware.nics.map((n) => n.mac),
      ...(hardware.system.productUuid ? { productUuid: hardware.system.productUuid } : {}),
    },
  };
  for (let transient = 0; ;) {
    try {
      const { certificate } = await client.get<{ certificate: string }>('/v1/join/ca');
      if (caFingerprint(certificate) !== params.ca) throw caPinRefused();
      const answer = await client.join(body);
      const ca = answer.certificateChain[answer.certificateChain.length - 1];
      if (!ca || caFingerprint(ca) !== params.ca) throw caPinRefused();
      log.info('ramdisk joined', { nodeId: answer.nodeId, role: answer.role, taskQueue: answer.temporal.taskQueue, expiresAt: answer.expiresAt });
      return { key, answer, certificatePem: () => answer.certificateChain[0] as string };
    } catch (error) {
      const retryable = error instanceof ControlPlaneUnreachable || (isIronflowError(error) && error.code === 'INTERNAL');
      if (retryable && transient < TRANSIENT_RETRIES && !options.signal?.aborted) {
        transient += 1;
        log.warn('join failed; retrying', { error: (error as Error).message, attempt: transient });
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const pending = isIronflowError(error) && error.details.reason === 'approval-pending';
      if (!pending || options.signal?.aborted) throw error;
      log.info("join waits for an operator's approval; retrying", { joinRequestId: error.details.joinRequestId });
      await new Promise((r) => setTimeout(r, options.approvalRetryMs ?? 30_000));
    }
  }
}
