// The fleet figure's control plane (API, agent gateway, control-plane worker) in a process of
// its own, so its CPU time and memory are its own; with --no-worker the API and gateway only,
// the workflows running in worker processes of their own (the cluster runs). The settings come
// from the environment (bench/fleet/cycle.ts passes its bench stack's), the image signer from
// BENCH_IMAGE_SIGNER_ID and BENCH_IMAGE_SIGNER_PEM (its public key). It sends { ready: { url,
// bearer } } on its IPC channel once it serves, answers each 'usage' message with { usage:
// { cpuMs, rssBytes } }, and stops on SIGTERM.
import { parseArgs } from 'node:util';
import { loadConfig } from '../../services/config';
import { addImageSigner } from '../../services/images/signers';
import { startControlPlane } from '../../stack/control-plane';

export interface ControlPlaneMessage {
  ready?: { url: string; bearer: string };
  usage?: { cpuMs: number; rssBytes: number };
}

async function main(): Promise<void> {
  if (!process.send) throw new Error('bench/fleet/control-plane.ts runs as a child with an IPC channel (bench/fleet/cycle.ts starts it)');
  const send = (message: ControlPlaneMessage) => process.send?.(message);
  const { values } = parseArgs({ options: { 'no-worker': { type: 'boolean', default: false } } });
  const cp = await startControlPlane(loadConfig(process.env), { worker: !values['no-worker'] });
  const { BENCH_IMAGE_SIGNER_ID: signerId, BENCH_IMAGE_SIGNER_PEM: signerPem } = process.env;
  if (signerId && signerPem) await addImageSigner(cp.db, { tenantId: 'root', id: signerId, publicKeyPem: signerPem });
  process.on('message', (message) => {
    if (message !== 'usage') return;
    const cpu = process.cpuUsage();
    send({ usage: { cpuMs: (cpu.user + cpu.system) / 1000, rssBytes: process.memoryUsage.rss() } });
  });
  const stop = async () => {
    await cp.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  // The parent gone (killed, crashed): nothing is left to measure.
  process.once('disconnect', () => void stop());
  send({ ready: { url: cp.url, bearer: cp.rootCredential.bearer } });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
