// `npm run demo`: the metal lifecycle for a newcomer, on this machine, with nothing but
// emulated hardware. Starts the Temporal dev server (with its Web UI), the API and the
// control-plane worker, a site with a real site agent (BMC drivers, boot server), N
// emulated machines (Redfish BMCs, PXE firmware, real ramdisk agents, an installed OS that
// runs the real node agent), and a signed image on a local HTTPS server. Then it walks the
// machines through enroll → ready, deploys the first, and releases it, printing each step
// with the Temporal Web UI link of every workflow. Everything stays up until Ctrl-C.
//
// With --qemu (or DEMO_QEMU=1; root) the machines are QEMU VMs with real firmware on a network
// of namespaces (agent/emulator/qemu-site.ts), the site agent in one of them, and the image
// is `npm run build:os-image`'s: each machine's serial log path is printed.
//
// Environment: DEMO_MACHINES (default 3; 1 with --qemu: TCG boots take ~40 s each); the usual IRONFLOW_* settings. It uses a fresh data
// dir under the system temp dir unless IRONFLOW_DATA_DIR is set, and the default ports
// (API 8080-ish from temporal-dev.yaml, Temporal 7233, Web UI 8233): stop `npm start` first.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Fleet } from '../agent/emulator/fleet';
import { nodeAgentOs } from '../agent/emulator/installed-os';
import { QEMU_SITE_AGENT_IP, requireQemuSite, startQemuSite, type QemuSite } from '../agent/emulator/qemu-site';
import { loadSiteAgentConfig } from '../agent/site/config';
import { writeLocalSiteAgentConfig } from './local-site-agent-config';
import { AgentLog } from '../agent/common/log';
import { startSiteAgent, type SiteAgent } from '../agent/site/main';
import { ApiClient } from '../cli/api-client';
import { loadConfig, repoRoot } from '../services/config';
import { spkiPinOf } from '../services/ca-pin';
import { addImageSigner } from '../services/images/signers';
import type { MetalNodeView } from '../core/schemas/metal';
import { temporalLinks, temporalWebUiBase } from '../core/temporal-links';
import { startControlPlane, type ControlPlane } from './control-plane';
import { devServerOptions, startTemporalServer, type TemporalServer } from './temporal-server';
import { makeServerCertificate } from './throwaway-tls';
import { serveLocalOsImage } from './local-os-image';

const say = (line: string) => process.stdout.write(`${line}\n`);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stoppers: Array<() => Promise<unknown>> = [];
let stopping = false;
/** Stops what started, last first: a failed demo leaves no QEMU process or namespace behind either. */
async function stop(reason: string, exitCode = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  say(`\ndemo: ${reason}: stopping…`);
  for (const s of stoppers.reverse()) await s().catch((e: unknown) => say(`demo: ${String(e)}`));
  say('demo: stopped.');
  process.exit(exitCode);
}

const osImageFile = path.join(repoRoot, '.ironflow/os-image/os.img');

async function main(): Promise<void> {
  const onQemu = process.argv.includes('--qemu') || process.env.DEMO_QEMU === '1';
  if (onQemu) {
    requireQemuSite('bios');
    if (!existsSync(osImageFile)) throw new Error(`no OS image at ${osImageFile}: run npm run build:os-image first`);
  }
  const machinesWanted = Number(process.env.DEMO_MACHINES ?? (onQemu ? 1 : 3));
  const dataDir = process.env.IRONFLOW_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'ironflow-demo-'));
  const env = {
    ...process.env,
    IRONFLOW_DATA_DIR: dataDir,
    // The emulated OS runs the agent in this process; a real OS would download it from here.
    IRONFLOW_AGENT_URL: process.env.IRONFLOW_AGENT_URL ?? 'https://downloads.example.com/ironflow-agent',
    IRONFLOW_AGENT_SHA256: process.env.IRONFLOW_AGENT_SHA256 ?? sha256(Buffer.from('demo: the emulated OS runs the agent in-process')),
  };
  const defaults = loadConfig(env);
  // QEMU machines reach the API and the agent gateway at the site agent's bridge address
  // (relayed there, same ports). Off loopback the API is https (agents refuse plain http
  // there): a throwaway CA and a certificate naming that address, its CA pinned in the user data.
  const apiTlsDir = path.join(dataDir, 'api-tls');
  if (onQemu) mkdirSync(apiTlsDir, { recursive: true, mode: 0o700 });
  const apiTls = onQemu ? makeServerCertificate(apiTlsDir, 'api.demo', [QEMU_SITE_AGENT_IP]) : undefined;
  const apiCaPin = apiTls ? spkiPinOf(apiTls.caPem) : undefined;
  const config =
    apiTls && apiCaPin
      ? loadConfig({
          ...env,
          IRONFLOW_API_URL: `https://${QEMU_SITE_AGENT_IP}:${defaults.api.port}`,
          IRONFLOW_API_TLS_CERT: apiTls.chainFile,
          IRONFLOW_API_TLS_KEY: apiTls.keyFile,
          // Pins come as a set of three; the join pins are not checked yet (docs/lifecycle.md).
          IRONFLOW_SERVING_CA_PIN: apiCaPin,
          IRONFLOW_JOIN_SIGNING_PIN: apiCaPin,
          IRONFLOW_JOIN_ENCRYPTION_PIN: apiCaPin,
          IRONFLOW_AGENT_GATEWAY_ADDRESS: `${QEMU_SITE_AGENT_IP}:${defaults.gateway.port}`,
        })
      : defaults;
  const webUi = temporalWebUiBase(config);
  const ui = temporalLinks(config).workflow;

  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  say(`demo: data dir ${dataDir}`);
  say(`demo: starting the Temporal dev server on ${config.temporal.address} (Web UI ${webUi})…`);
  const temporal: TemporalServer = await startTemporalServer(devServerOptions(config));
  stoppers.push(() => temporal.stop());
  const cp: ControlPlane = await startControlPlane(config, { logger: false });
  stoppers.push(() => cp.close());
  const api = new ApiClient(cp.url, cp.rootCredential.bearer, { caPems: apiTls ? [apiTls.caPem] : undefined });
  say(`demo: API ${cp.url} (OpenAPI UI ${cp.url}/docs); root credential in ${cp.rootCredential.file}`);

  const site = await api.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'demo-1', idempotencyKey: 'demo-site' });

  // A signed OS image on a local HTTPS server whose throwaway CA the ramdisks carry.
  const tlsDir = path.join(dataDir, 'image-tls');
  const signer = generateKeyPairSync('ed25519');
  await addImageSigner(cp.db, { tenantId: 'root', id: 'demo-platform', publicKeyPem: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
  // QEMU machines boot the image they get: the real OS image; emulated ones take any bytes.
  const image = await serveLocalOsImage(api, {
    name: 'demo',
    raw: onQemu ? readFileSync(osImageFile) : randomBytes(4 * 1024 * 1024),
    dir: tlsDir,
    signer: { id: 'demo-platform', privateKey: signer.privateKey },
  });
  stoppers.push(() => image.close());
  await api.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id: 'demo-os-host',
      version: 1,
      target: 'metal',
      description: 'the demo OS: user data, ramdisk, signed image, boot from disk, wait for the OS agent',
      image: { ref: 'demo-os@1', format: 'raw', compression: 'gzip' },
      userData: { kind: 'cloud-init', template: 'ironflow-host.yaml' },
      steps: [
        { use: 'userdata.render' },
        { use: 'metal.ensureRamdisk', timeout: onQemu ? '10m' : '5m' },
        { use: 'deploy.deploy', timeout: '10m' },
        { use: 'management.setBootDevice', on: 'site', with: { device: 'disk', persistent: true } },
        // A QEMU machine boots its disk through the BMC (a power cycle); an emulated one kexecs.
        onQemu
          ? { use: 'power.setPower', on: 'site', with: { action: 'cycle' }, await: 'rejoin', timeout: '10m' }
          : { use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: '5m' },
      ],
      cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
    },
  });
  say(`demo: image demo-os@1 (signed by demo-platform) at ${image.source}; deploy profile demo-os-host@1`);

  // A pool (on QEMU its site agent pre-warms the image into its cache: machines stream it
  // from there, the image server being on this host's loopback), a site token, and a real
  // site agent: in process with its boot server on a free local port, or in a namespace.
  const pool = await api.call<{ id: string }>('POST', '/v1/pools', {
    tenantId: 'root',
    siteId: site.id,
    class: 'demo-metal',
    // Emulated machines' DCGM reports say they are emulated, and count only where the pool allows it.
    policy: onQemu ? { prewarmImages: [image.ref] } : { allowEmulatedMachines: true },
  });
  const token = await api.call<{ token: string }>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 600, maxUses: 1 });
  const agentDir = path.join(dataDir, 'site-agent');
  const agentConfig = writeLocalSiteAgentConfig(agentDir, cp.url);
  let agent: SiteAgent | undefined;
  let qemuSite: QemuSite | undefined;
  if (onQemu) {
    const tokenFile = path.join(agentDir, 'token');
    writeFileSync(tokenFile, token.token, { mode: 0o600 });
    const caFile = path.join(tlsDir, 'ca.pem');
    writeFileSync(caFile, image.caPem);
    qemuSite = await startQemuSite({
      dir: path.join(dataDir, 'qemu'),
      controlPlaneUrl: cp.url,
      controlPlaneCaPems: apiTls ? [apiTls.caPem] : undefined,
      agentDataDir: path.join(agentDir, 'data'),
      tokenFile,
      gatewayPort: config.gateway.port,
      extraPorts: [image.port],
      cacheCaFile: caFile,
    });
    const started = qemuSite;
    stoppers.push(() => started.close());
    say(`demo: site ${site.id}, pool ${pool.id}; site agent in a network namespace at ${QEMU_SITE_AGENT_IP} (log ${qemuSite.agentLogFile})`);
  } else {
    const agentLog = new AgentLog((line) => void writeFileSync(path.join(agentDir, 'agent.log'), `${line}\n`, { flag: 'a' }));
    const inProcess = await startSiteAgent(loadSiteAgentConfig(agentConfig), { env: { IRONFLOW_JOIN_TOKEN: token.token }, log: agentLog });
    agent = inProcess;
    stoppers.push(() => inProcess.stop());
    for (let i = 0; i < 150 && !inProcess.session.state().active; i++) await sleep(200);
    say(
      `demo: site ${site.id}, pool ${pool.id}; site agent ${inProcess.identity.current.nodeId} (boot server ${inProcess.bootServer?.url ?? 'none'}; log ${path.join(agentDir, 'agent.log')})`,
    );
  }

  let fleet: Fleet | undefined;
  if (!qemuSite) {
    const inProcess = agent;
    const emulated = await Fleet.start({
      dataDir: path.join(dataDir, 'machines'),
      bootServerUrl: () => inProcess?.bootServer?.url,
      installedOs: nodeAgentOs(),
      ramdiskTrustedCaPems: [image.caPem],
      sleepScale: 0.2,
    });
    fleet = emulated;
    stoppers.push(() => emulated.close());
  }

  // The walk: every state move and the workflow that drives it, with its Web UI link.
  const get = (nodeId: string) => api.call<MetalNodeView>('GET', `/v1/metal/nodes/${nodeId}?tenantId=root`);
  const seen = new Map<string, string>();
  const report = (name: string, node: MetalNodeView) => {
    const key = `${node.provisionState}|${node.workflowId ?? ''}`;
    if (seen.get(node.nodeId) === key) return;
    seen.set(node.nodeId, key);
    say(
      `  ${name} ${node.nodeId}: ${node.provisionState}${node.workflowId ? `  → ${ui(node.workflowId)}` : ''}${node.lastError ? `  (${node.lastError.code}: ${node.lastError.message})` : ''}`,
    );
  };
  const until = async (name: string, nodeId: string, state: string) => {
    for (;;) {
      const node = await get(nodeId);
      report(name, node);
      if (node.provisionState === state && node.workflowId === null) return node;
      if (node.provisionState === 'failed' && node.workflowId === null) throw new Error(`${name} failed: ${node.lastError?.message ?? 'see its workflow'}`);
      await sleep(300);
    }
  };

  say(`\ndemo: 1. enrolling ${machinesWanted} machines by their BMC alone`);
  const machines: Array<{ name: string; nodeId: string; disk: string }> = [];
  for (let i = 0; i < machinesWanted; i++) {
    const added = qemuSite
      ? qemuSite.addMachine({ firmware: 'bios', diskBytes: 192 * 1024 * 1024 })
      : await (fleet as Fleet)
          .add({ diskBytes: 16 * 1024 * 1024 })
          .then(({ machine, bmc }) => ({ id: machine.description.id, bmc, disk: machine.diskPath, serialLogs: undefined }));
    const node = await api.call<MetalNodeView>('POST', '/v1/metal/nodes', { tenantId: 'root', poolId: pool.id, bmc: { driver: 'redfish', ...added.bmc } });
    machines.push({ name: added.id, nodeId: node.nodeId, disk: added.disk });
    say(
      `  ${added.id} enrolled as ${node.nodeId}; its lifecycle workflow: ${ui(`node:${node.nodeId}`)}${added.serialLogs ? `; serial logs ${added.serialLogs}` : ''}`,
    );
  }
  say('\ndemo: 2. enroll → inspect → commission → ready, on their own');
  await Promise.all(machines.map((m) => until(m.name, m.nodeId, 'ready')));

  const first = machines[0] as (typeof machines)[number];
  if (onQemu) {
    const cached = path.join(dataDir, 'site-agent', 'data', 'cache', image.sha256);
    say(`\ndemo: waiting for the site agent to cache demo-os@1 (${cached})…`);
    while (!existsSync(cached)) await sleep(1000);
  }
  say(`\ndemo: 3. npx ironflow metal deploy ${first.nodeId} --profile demo-os-host --profile-version 1`);
  await api.call('POST', `/v1/metal/nodes/${first.nodeId}/deploy`, { tenantId: 'root', profileId: 'demo-os-host', profileVersion: 1 });
  const deployed = await until(first.name, first.nodeId, 'deployed');
  say(`  deployed: role ${deployed.role}; the image is on ${first.disk}; the installed OS's node agent joined as ${first.nodeId}`);

  say(`\ndemo: 4. npx ironflow metal undeploy ${first.nodeId}   (quick wipe, power off, back to ready)`);
  await api.call('POST', `/v1/metal/nodes/${first.nodeId}/undeploy`, { tenantId: 'root' });
  await until(first.name, first.nodeId, 'ready');

  say('\ndemo: done. Everything keeps running: try, in another terminal,');
  say(
    `  IRONFLOW_CREDENTIAL=$(cat ${cp.rootCredential.file}) npx ironflow --api ${cp.url}${apiTls ? ` --ca-file ${apiTls.caFile}` : ''} metal list --pool ${pool.id}`,
  );
  say(`  … metal deploy ${machines[1]?.nodeId ?? first.nodeId} --profile demo-os-host --profile-version 1`);
  say(`  Temporal Web UI: ${webUi}/namespaces/${config.temporal.namespace}/workflows`);
  say('Ctrl-C stops everything.');
}

main().catch((err: unknown) => {
  process.stderr.write(`demo: failed: ${err instanceof Error ? err.message : String(err)}\n`);
  void stop('failed', 1);
});
