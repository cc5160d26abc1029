// The site agent's side of the discovery assertion: signs, with its node key, that it
// served this MAC its script for this workflow at this lease epoch (services/boot/discovery-assertion.ts).
import { assertionWindow, encodeSignedAssertion, newAssertionNonce } from '../../services/boot/discovery-assertion';
import type { BootEntry } from '../../core/boot/boot-entry';
import type { Signer } from '../common/control-plane-client';

interface AssertionContext {
  signer: Signer;
  siteId: string;
  agentNodeId: string;
  epoch: number;
}

export function signDiscoveryAssertion(
  context: AssertionContext,
  entry: BootEntry,
  seen: { ip: string | null; productUuid: string | null },
  now = new Date(),
): string {
  return encodeSignedAssertion(context.signer.key, context.signer.certificatePem(), {
    v: 1,
    nonce: newAssertionNonce(),
    siteId: context.siteId,
    agentNodeId: context.agentNodeId,
    epoch: context.epoch,
    mac: entry.mac,
    ip: seen.ip,
    productUuid: seen.productUuid ?? entry.productUuid,
    workflowId: entry.workflowId,
    ...assertionWindow(now, new Date(entry.notAfter)),
  });
}
