// One QEMU machine with real firmware (SeaBIOS, TCG) through the whole metal lifecycle, with
// nobody touching it: enrolled by its emulated Redfish BMC alone (agent/emulator/qemu-bmc.ts
// starts, stops and orders the boot of its QEMU process), inspected and commissioned in the
// real ramdisk (`npm run build:ramdisk`: PXE through the site agent's proxy DHCP, iPXE, the
// kernel and initrd over HTTP, the agent joining over the network), a real quick wipe of its
// virtio disk, ready; deployed with the OS image (`npm run build:os-image`) from the site
// agent's image cache, with the user data as a config drive; the installed OS boots from the
// disk and its node agent joins as the same node; undeployed with a quick wipe back to ready.
// Beside it, at the same time, a second machine with UEFI firmware (OVMF) is enrolled to ready
// and deployed with the UEFI image (GPT, systemd-boot on its EFI system partition): the config
// drive goes into the GPT, and OVMF boots the installed OS from the disk. The two run side by
// side, as a site's machines do (one site agent serving both), and take a core each under TCG.
//
// The network is the test's own (test/helpers/netns.ts, 10.77.61.0/24): dnsmasq gives
// addresses only; the site agent runs as a process in a namespace and reaches this host's
// control plane, BMC and image server through loopback relays; the machine reaches the API
// and Temporal at the agent's address (relays on the bridge), which is also the address the
// control plane hands machines (the user data's --server, Join's Temporal address). Off
// loopback the API is https with a throwaway CA: the site agent trusts its file, the ramdisk
// its pin in the boot script (if.tls), the installed OS the user data's --serving-ca-pin.
//
// Slow (TCG boots, several): CI runs it in its SQLite pass only; IRONFLOW_E2E_QEMU=0 (set by
// .ci/run for the PostgreSQL re-run) skips it, saying so.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { QemuBoot, QemuMachine } from '../../agent/emulator/qemu-machine';
import { BOOT_HTTP_PORT, namespacedBootSection } from '../../agent/emulator/qemu-site';
import { joinArgsFromUserData } from '../../agent/node/user-data';
import { repoRoot } from '../../services/config';
import type { MetalNodeView } from '../../core/schemas/metal';
import { until, type BootSite } from '../helpers/boot-site';
import { stopChild } from '../helpers/child-process';
import { requireDnsmasq, startAddressOnlyDhcp, type AddressOnlyDhcp } from '../helpers/dnsmasq';
import { startE2eSite, type E2eSite, type E2eSiteAgent } from '../helpers/e2e-site';
import { createTestNetwork, type LoopbackForward, type NetworkHost, type TestNetwork } from '../helpers/netns';
import { QemuBmc } from '../helpers/qemu-bmc';
import { requireQemu } from '../helpers/qemu';
import { spawnSiteAgent, type AgentProcess } from '../helpers/agent-process';
import { requireTools } from '../helpers/require-tools';

const SUBNET = '10.77.61';
const MAC = '52:54:00:77:61:01';
const UEFI_MAC = '52:54:00:77:61:02';
const DISK_BYTES = 192 * 1024 * 1024;
const IMAGE_REF = 'qemu-os@1';
const UEFI_IMAGE_REF = 'qemu-os-uefi@1';
/** Each phase boots at least once under TCG (30–60 s) and moves real bytes. */
const PHASE_TIMEOUT_MS = 600_000;

const skipReason =
  process.env.IRONFLOW_E2E_QEMU === '0' ? 'IRONFLOW_E2E_QEMU=0: the QEMU lifecycle test runs in the other pass (CI runs it on SQLite only)' : undefined;
if (skipReason) process.stderr.write(`qemu-lifecycle: skipped: ${skipReason}\n`);

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * A deploy of the image `ref` with cloud-init user data. The disk becomes the boot device for
 * good, then the installed OS starts by a power cycle through the BMC, or by the ramdisk's
 * kexec; done when its agent joins.
 */
const deployProfile = (id: string, ref: string, start: 'power-cycle' | 'kexec') => ({
  id,
  version: 1,
  target: 'metal',
  image: { ref, format: 'raw', compression: 'gzip' },
  userData: { kind: 'cloud-init', template: 'ironflow-host.yaml' },
  steps: [
    { use: 'userdata.render' },
    { use: 'metal.ensureRamdisk', timeout: '10m' },
    { use: 'deploy.deploy', timeout: '10m' },
    { use: 'management.setBootDevice', on: 'site', with: { device: 'disk', persistent: true } },
    start === 'kexec'
      ? { use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: '10m' }
      : { use: 'power.setPower', on: 'site', with: { action: 'cycle' }, await: 'rejoin', timeout: '10m' },
  ],
  cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
});

/** `npm run <script>` (skips when up to date); its own message names what is missing on failure. */
function buildImage(script: string): void {
  try {
    execFileSync('npm', ['run', '--silent', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: Buffer; stdout?: Buffer };
    throw new Error(
      `npm run ${script} failed (bash scripts/test-deps.sh installs what it needs):\n${String(stderr ?? '')}${String(stdout ?? '')}`.slice(0, 4000),
    );
  }
}

describe.skipIf(skipReason !== undefined)('QEMU machines through the whole metal lifecycle, side by side', () => {
  let network: TestNetwork;
  let agentHost: NetworkHost;
  let dhcp: AddressOnlyDhcp;
  let bmc: QemuBmc;
  let site: E2eSite;
  let agent: AgentProcess | undefined;
  const relays: LoopbackForward[] = [];
  let dir: string;
  let agentDataDir: string;
  let osImage: Buffer;
  let uefiImage: Buffer;
  let poolId: string;
  let watching = true;

  /** The site agent in the agent's namespace: proxy DHCP, TFTP, the real ramdisk's files, the image cache. */
  async function startSiteAgentInNamespace(boot: BootSite, images: { port: number; caPem: string }, api: { caPem?: string }): Promise<E2eSiteAgent> {
    const apiPort = Number(new URL(boot.t.cp.url).port);
    const gatewayPort = Number(boot.t.cp.gateway.address.split(':').pop());
    relays.push(await network.forwardLoopback(agentHost.ns, [apiPort, gatewayPort, bmc.port, images.port]));
    // What the machine dials: the API (ramdisk join, the installed OS's join) and the agent gateway.
    relays.push(await network.forwardToBridge(agentHost, [apiPort, gatewayPort]));
    const agentDir = mkdtempSync(path.join(dir, 'site-agent-'));
    agentDataDir = path.join(agentDir, 'data');
    const caFile = path.join(agentDir, 'images-ca.pem');
    writeFileSync(caFile, images.caPem);
    // The API is on TLS (machines reach it off loopback): the agent trusts its CA, and its boot scripts pin it for ramdisks (if.tls).
    const apiCaFile = path.join(agentDir, 'api-ca.pem');
    writeFileSync(apiCaFile, api.caPem ?? '');
    const configFile = path.join(agentDir, 'site-agent.toml');
    writeFileSync(
      configFile,
      [
        `control_plane_url = ${JSON.stringify(boot.t.cp.url)}`,
        `control_plane_ca_file = ${JSON.stringify(apiCaFile)}`,
        'data_dir = "data"',
        '',
        ...namespacedBootSection(agentHost, {
          filesDir: path.join(repoRoot, '.ironflow/ramdisk'),
          gatewayUrl: `https://${agentHost.ip}:${apiPort}`,
          cacheCaFile: caFile,
        }),
        '',
      ].join('\n'),
    );
    const started = spawnSiteAgent(configFile, { IRONFLOW_JOIN_TOKEN: boot.siteToken }, (command, args, options) =>
      network.spawnIn(agentHost.ns, command, args, options),
    );
    agent = started;
    await started.waitForLog('holding the boot lease: active boot server', 90_000);
    return {
      dataDir: agentDataDir,
      bootServerUrl: () => `http://${agentHost.ip}:${BOOT_HTTP_PORT}`,
      lines: () => started.lines,
      kill: () => void started.child.kill('SIGKILL'),
      restart: () => Promise.reject(new Error('the namespaced site agent is not restarted here')),
      stop: () => stopChild(started.child),
    };
  }

  /** A machine the test drives: its QEMU process, its node, and its provisionState changes as polled, with when. */
  interface Tracked {
    name: string;
    machine: QemuMachine;
    nodeId: string;
    transitions: Array<{ state: string; at: number }>;
  }

  /** Adds a QEMU machine behind the BMC, enrolls it by its BMC alone, and watches its node's state. */
  async function enroll(options: { id: string; firmware: 'bios' | 'uefi'; mac: string; uuid: string }): Promise<Tracked> {
    const record = bmc.add({ ...options, network, dir, diskBytes: DISK_BYTES, memoryMb: 1024 });
    const node = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', { tenantId: 'root', poolId, bmc: { driver: 'redfish', ...record.bmc } });
    const tracked: Tracked = { name: options.id, machine: record.machine, nodeId: node.nodeId, transitions: [] };
    void (async () => {
      while (watching) {
        const state = (await site.get(tracked.nodeId).catch(() => undefined))?.provisionState;
        if (state && tracked.transitions.at(-1)?.state !== state) tracked.transitions.push({ state, at: Date.now() });
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    return tracked;
  }

  /** Every boot's serial log path and tail, for a failure message. */
  const consoles = ({ machine }: Tracked) =>
    machine.boots.map((b) => `--- boot ${b.index} (${b.device}), serial log ${b.serialLog}:\n${b.tail().slice(-1200)}`).join('\n') ||
    '(the machine never powered on)';

  /** settle (failing at once when the node lands in failed), saying where the machine's consoles stand on failure. */
  async function settle(tracked: Tracked, state: string): Promise<MetalNodeView> {
    const { nodeId } = tracked;
    let settled = false;
    try {
      const failed = until(
        'the node to fail',
        async () => {
          if (settled) throw new Error('settled');
          const node = await site.get(nodeId);
          return node.provisionState === 'failed' && node.workflowId === null ? node : undefined;
        },
        PHASE_TIMEOUT_MS,
      ).then(
        (node) => Promise.reject(new Error(`${nodeId} failed from ${node.failedFrom}: ${JSON.stringify(node.lastError)}`)),
        () => new Promise<never>(() => undefined),
      );
      return await Promise.race([site.settle(nodeId, state, PHASE_TIMEOUT_MS), failed]);
    } catch (error) {
      throw new Error(
        `${tracked.name}: ${(error as Error).message}\nsite agent log tail:\n${(agent?.lines ?? []).slice(-40).join('\n')}\ndnsmasq log tail:\n${dhcp.log().slice(-600)}\nconsoles:\n${consoles(tracked)}`,
      );
    } finally {
      settled = true;
    }
  }

  const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);
  const firstAt = ({ transitions }: Tracked, state: string) => transitions.find((t) => t.state === state)?.at ?? NaN;

  beforeAll(async () => {
    requireQemu(['bios', 'uefi']);
    requireDnsmasq();
    requireTools('the QEMU lifecycle test', [
      ['mtype', 'mtools'],
      ['syslinux', 'syslinux'],
      ['cpio', 'cpio'],
      ['zstd', 'zstd'],
      ['sfdisk', 'fdisk'],
      ['kexec', 'kexec-tools'],
    ]);
    buildImage('build:ramdisk');
    buildImage('build:os-image');
    osImage = readFileSync(path.join(repoRoot, '.ironflow/os-image/os.img'));
    uefiImage = readFileSync(path.join(repoRoot, '.ironflow/os-image/os-uefi.img'));
    dir = mkdtempSync(path.join(inject('runDir'), 'qemu-lifecycle-'));

    network = createTestNetwork('qlife', SUBNET);
    agentHost = network.addHost('agent', 2);
    dhcp = startAddressOnlyDhcp(network, network.addHost('dhcp', 3), dir);
    bmc = await QemuBmc.start();
    site = await startE2eSite('qemu-lifecycle', { machineFacingHost: agentHost.ip, startSiteAgent: startSiteAgentInNamespace });

    // The image, signed, pre-warmed into the site agent's cache by its pool's policy: the
    // ramdisk streams it from there (if.cache), over the provisioning network.
    const imageSha256s = [(await site.registerImage(IMAGE_REF, osImage)).sha256, (await site.registerImage(UEFI_IMAGE_REF, uefiImage)).sha256];
    poolId = (
      await site.t.root.call<{ id: string }>('POST', '/v1/pools', {
        tenantId: 'root',
        siteId: site.siteId,
        class: 'qemu-metal',
        policy: { prewarmImages: [IMAGE_REF, UEFI_IMAGE_REF] },
      })
    ).id;
    await until('the site agent to cache the images', () => imageSha256s.every((sha) => existsSync(path.join(agentDataDir, 'cache', sha))), 180_000).catch(
      (error: Error) => {
        throw new Error(`${error.message}; site agent log tail:\n${(agent?.lines ?? []).slice(-15).join('\n')}`);
      },
    );
    for (const document of [deployProfile('qemu-os-host', IMAGE_REF, 'power-cycle'), deployProfile('qemu-os-uefi-kexec', UEFI_IMAGE_REF, 'kexec')])
      await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document });
  }, 900_000);

  afterAll(async () => {
    watching = false;
    await bmc?.close();
    await site?.close(); // stops the site agent too
    for (const relay of relays) await relay.stop();
    await network?.destroy();
  });

  /**
   * Deploys the node with `profileId` until deployed; answers the disk as the deploy left it
   * (copied as the BMC powers the machine on from its disk, before the installed OS mounts its
   * partition, where its agent writes its identity), that boot, and when it came.
   */
  async function deploy(tracked: Tracked, profileId: string): Promise<{ disk: string; boot: QemuBoot; diskBootAt: number }> {
    const { machine, nodeId } = tracked;
    const bootsBefore = machine.boots.length;
    // Right after ready, as an operator would: a powered-off ramdisk's long poll may still be open
    // at the server and take the first ramdisk task; the relay tries a timed-out attempt once more.
    expect((await site.verb(nodeId, 'deploy', { profileId, profileVersion: 1 })).provisionState).toBe('deploying');
    const diskBoot = until('the power cycle into the disk', () => machine.boots.slice(bootsBefore).find((b) => b.device === 'disk'), PHASE_TIMEOUT_MS);
    const disk = path.join(dir, `${nodeId}-deployed-disk.img`);
    const snapshotTaken = diskBoot.then((boot) => {
      copyFileSync(machine.spec.diskPath as string, disk);
      return { boot, osRunning: boot.serial().includes('ironflow os:'), at: Date.now() };
    });
    snapshotTaken.catch(() => undefined);
    expect(await settle(tracked, 'deployed')).toMatchObject({ role: 'host', power: 'on' });
    const { boot, osRunning, at } = await snapshotTaken;
    expect(osRunning, 'the disk was copied before the installed OS ran').toBe(false);
    return { disk, boot, diskBootAt: at };
  }

  /** The config drive (CIDATA) at `startSector` of the disk holds the user data: the join line for this node, at the address the machine reaches the API at. Only checked, never printed: it holds a token. */
  function expectConfigDrive({ nodeId }: Tracked, disk: string, startSector: number): void {
    const env = { ...process.env, MTOOLS_SKIP_CHECK: '1' };
    const driveAt = `${disk}@@${startSector * 512}`;
    expect(execFileSync('mlabel', ['-s', '-i', driveAt, '::'], { env, encoding: 'utf8' })).toMatch(/CIDATA/);
    const userData = execFileSync('mtype', ['-i', driveAt, '::/user-data'], { env, encoding: 'utf8' });
    expect(userData.startsWith('#cloud-config'), 'user-data is a cloud-config').toBe(true);
    expect(joinArgsFromUserData('cloud-init', userData)).toMatchObject({
      server: `https://${agentHost.ip}:${new URL(site.t.cp.url).port}`,
      nodeId,
      servingCaPin: expect.stringMatching(/^sha256\//),
    });
  }

  /** The installed OS's node agent joined as the same node and holds its session, connected since `since` (its session replaces the ramdisk's once its first heartbeat arrives). */
  async function expectOsSession(tracked: Tracked, since: number): Promise<void> {
    const { nodeId } = tracked;
    expect((await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId, role: 'node' } })).length).toBe(1);
    await until(
      "the installed OS's agent to hold the node's session",
      async () => {
        const session = await site.t.cp.db.agentSession.findUnique({ where: { nodeId } });
        return session?.role === 'node' && session.connectedAt.getTime() >= since;
      },
      120_000,
    ).catch((error: Error) => {
      throw new Error(`${tracked.name}: ${error.message}\nconsoles:\n${consoles(tracked)}`);
    });
  }

  // The two machines go through their phases at the same time: each suite below runs beside the
  // other (concurrent), and the phases within each one after another (sequential).
  describe.concurrent('a BIOS machine (SeaBIOS)', () => {
    const uuid = randomUUID();
    let bios: Tracked;

    it.sequential(
      'enrolled by its BMC alone, it is inspected and commissioned in the real ramdisk (its own UUID and MAC, a real wipe) and rests ready, off',
      async () => {
        const enrolledAt = Date.now();
        bios = await enroll({ id: 'qemu-bios', firmware: 'bios', mac: MAC, uuid });
        const { machine, nodeId } = bios;

        const ready = await settle(bios, 'ready');
        expect(ready).toMatchObject({ macs: [MAC], productUuid: uuid, power: 'off', maintenance: false });
        // The inventory the real ramdisk read from the VM's SMBIOS and NIC.
        const row = await site.t.cp.db.node.findUniqueOrThrow({ where: { id: nodeId } });
        const inventory = row.inventory as { system?: { productUuid?: string }; nics?: Array<{ mac: string }>; disks?: Array<{ sizeBytes: number }> };
        expect(inventory.system?.productUuid).toBe(uuid);
        expect(inventory.nics?.map((n) => n.mac)).toContain(MAC);
        expect(inventory.disks?.map((d) => d.sizeBytes)).toContain(DISK_BYTES);
        expect((await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId } })).map((c) => c.role)).toContain('ramdisk');
        // The commissioning wipe: attested by the ramdisk's certificate (the lifecycle verified it to reach ready) and read back.
        const commissioning = (await site.stateWorkflows(nodeId)).find((id) => id.includes(':commissioning:')) as string;
        const outputs = (
          (await site.t.cp.temporal.workflow.getHandle(commissioning).result()) as {
            outputs: Record<string, { attestation?: unknown; disks?: Array<{ readBack: boolean }> }>;
          }
        ).outputs;
        const wipe = Object.values(outputs).find((o) => o && typeof o === 'object' && 'attestation' in o && 'disks' in o);
        expect(
          wipe?.disks?.every((d) => d.readBack),
          `the wipe result: ${JSON.stringify(wipe)}`,
        ).toBe(true);
        expect(await site.t.cp.db.event.count({ where: { subjectId: nodeId, type: 'security.attestation.refused' } })).toBe(0);
        // The ramdisk ran on this VM (its console), and commissioning powered it off through the BMC.
        expect(
          machine.boots.some((b) => b.serial().includes('ironflow ramdisk:')),
          consoles(bios),
        ).toBe(true);
        expect(bmc.host.get('qemu-bios')?.powerState).toBe('Off');
        expect(machine.running).toBe(false);
        process.stderr.write(
          `qemu-lifecycle: BIOS enroll → ready ${seconds(enrolledAt, Date.now())} s (inspecting at ${seconds(enrolledAt, firstAt(bios, 'inspecting'))} s, commissioning at ${seconds(enrolledAt, firstAt(bios, 'commissioning'))} s); boots: ${machine.boots.map((b) => b.device).join(', ')}\n`,
        );
      },
      PHASE_TIMEOUT_MS + 60_000,
    );

    it.sequential(
      'deploys the OS image (the disk holds its bytes, the config drive its user data) and the installed OS joins as the same node',
      async () => {
        const deployAt = Date.now();
        const { disk: snapshot, boot, diskBootAt } = await deploy(bios, 'qemu-os-host');

        // The image's bytes: everything but MBR partition entry 2 (bytes 462–477), where the
        // ramdisk adds the config drive (the image leaves that slot empty).
        const disk = readFileSync(snapshot);
        const entry2 = { from: 446 + 16, to: 446 + 32 };
        expect(osImage.subarray(entry2.from, entry2.to).every((b) => b === 0)).toBe(true);
        const withoutEntry2 = (bytes: Buffer) => Buffer.concat([bytes.subarray(0, entry2.from), bytes.subarray(entry2.to, osImage.length)]);
        expect(sha256(withoutEntry2(disk)), 'the disk holds the image').toBe(sha256(withoutEntry2(osImage)));
        // Entry 2: a FAT32 (LBA) partition of 4 MiB at the first MiB boundary after the image's partition.
        const type = disk[entry2.from + 4];
        const start = disk.readUInt32LE(entry2.from + 8);
        const sectors = disk.readUInt32LE(entry2.from + 12);
        const imageEnd = osImage.readUInt32LE(446 + 8) + osImage.readUInt32LE(446 + 12);
        expect({ type, start, sectors }).toEqual({ type: 0x0c, start: Math.ceil(imageEnd / 2048) * 2048, sectors: 8192 });
        expectConfigDrive(bios, snapshot, start);
        // The installed OS booted from the disk, and its node agent joined as the same node and holds its session.
        expect(boot.device).toBe('disk');
        expect(await bios.machine.status()).toBe('running');
        await boot.waitForSerial('ironflow os: config drive', 10_000);
        await expectOsSession(bios, deployAt);
        process.stderr.write(
          `qemu-lifecycle: BIOS deploy → deployed ${seconds(deployAt, Date.now())} s (power cycle into the disk at ${seconds(deployAt, diskBootAt)} s, the OS joined ${seconds(diskBootAt, Date.now())} s later)\n`,
        );
      },
      PHASE_TIMEOUT_MS + 60_000,
    );

    it.sequential(
      'undeploys with a quick wipe back to ready, off',
      async () => {
        const { machine, nodeId } = bios;
        const undeployAt = Date.now();
        expect((await site.verb(nodeId, 'undeploy', { wipe: 'quick' })).provisionState).toBe('releasing');
        const released = await settle(bios, 'ready');
        expect(released).toMatchObject({ role: 'machine', power: 'off' });
        // The quick wipe zeroed the disk's head (the image's MBR and partition start are gone).
        expect(
          readFileSync(machine.spec.diskPath as string)
            .subarray(0, 1024 * 1024)
            .every((b) => b === 0),
        ).toBe(true);
        expect(bmc.host.get('qemu-bios')?.powerState).toBe('Off');
        expect(await machine.status()).toBe('off');
        process.stderr.write(
          `qemu-lifecycle: BIOS undeploy → ready ${seconds(undeployAt, Date.now())} s; boots: ${machine.boots.map((b) => b.device).join(', ')}\n`,
        );
      },
      PHASE_TIMEOUT_MS + 60_000,
    );
  });

  describe.concurrent('a UEFI machine (OVMF)', () => {
    it.sequential(
      'rests ready, is deployed with the GPT image and kexecs into it; power cycled, OVMF boots the disk (systemd-boot)',
      async () => {
        const uuid = randomUUID();
        const enrolledAt = Date.now();
        const uefi = await enroll({ id: 'qemu-uefi', firmware: 'uefi', mac: UEFI_MAC, uuid });
        const { machine, nodeId } = uefi;
        expect(await settle(uefi, 'ready')).toMatchObject({ macs: [UEFI_MAC], productUuid: uuid, power: 'off', maintenance: false });

        // Deployed, then kexec'd from the ramdisk: the installed OS runs in the ramdisk's own power-on.
        const deployAt = Date.now();
        const bootsBefore = machine.boots.length;
        expect((await site.verb(nodeId, 'deploy', { profileId: 'qemu-os-uefi-kexec', profileVersion: 1 })).provisionState).toBe('deploying');
        expect(await settle(uefi, 'deployed')).toMatchObject({ role: 'host', power: 'on' });
        const deployedAt = Date.now();
        const deployBoots = machine.boots.slice(bootsBefore);
        expect(
          deployBoots.map((b) => b.device),
          'one power-on: the ramdisk, then the OS by kexec',
        ).toEqual(['pxe']);
        await deployBoots[0]?.waitForSerial('ironflow os: config drive', 10_000);
        expect(deployBoots[0]?.serial()).toContain('ironflow ramdisk:');
        await expectOsSession(uefi, deployAt);

        // The table as sfdisk reads it: no problem left (the image's backup table, at its 74 MiB end,
        // moved to the disk's end), the image's EFI system partition, then the config drive.
        const disk = path.join(dir, `${nodeId}-deployed-disk.img`);
        copyFileSync(machine.spec.diskPath as string, disk);
        const checked = spawnSync('sfdisk', ['--verify', disk], { encoding: 'utf8' });
        expect(`${checked.stdout}${checked.stderr}`).toContain('No errors detected.');
        const table = JSON.parse(execFileSync('sfdisk', ['--json', disk], { encoding: 'utf8' })) as {
          partitiontable: { label: string; lastlba: number; partitions: Array<{ start: number; size: number; type: string; name?: string }> };
        };
        expect(table.partitiontable.label).toBe('gpt');
        expect(table.partitiontable.lastlba).toBe(DISK_BYTES / 512 - 34);
        const [esp, drive] = table.partitiontable.partitions;
        const imageEsp = JSON.parse(
          execFileSync('sfdisk', ['--json', path.join(repoRoot, '.ironflow/os-image/os-uefi.img')], { encoding: 'utf8' }),
        ) as typeof table;
        // The image's partition as the image has it (its device node aside).
        const { node: _imageNode, ...imagePartition } = imageEsp.partitiontable.partitions[0] as { node?: string };
        expect(esp).toMatchObject({ ...imagePartition, type: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B' });
        expect(drive).toMatchObject({ start: Math.ceil(((esp?.start ?? 0) + (esp?.size ?? 0)) / 2048) * 2048, size: 8192, name: 'cidata' });
        expectConfigDrive(uefi, disk, drive?.start ?? 0);

        // Power cycled: OVMF boots the disk (its boot device for good), systemd-boot the OS, whose agent comes back.
        const cycleAt = Date.now();
        await site.verb(nodeId, 'power', { action: 'cycle' });
        const diskBoot = await until(
          'the power cycle into the disk',
          () => machine.boots.slice(bootsBefore + 1).find((b) => b.device === 'disk'),
          PHASE_TIMEOUT_MS,
        );
        await diskBoot.waitForSerial('ironflow os: config drive', 180_000);
        expect(diskBoot.serial(), 'OVMF booted the disk').toMatch(/BdsDxe: starting .*Pci/);
        expect(diskBoot.serial()).not.toContain('ironflow ramdisk:');
        await expectOsSession(uefi, cycleAt);
        process.stderr.write(
          `qemu-lifecycle: UEFI enroll → ready ${seconds(enrolledAt, deployAt)} s, deploy (kexec) → deployed ${seconds(deployAt, deployedAt)} s, power cycle → the OS back ${seconds(cycleAt, Date.now())} s; boots: ${machine.boots.map((b) => b.device).join(', ')}\n`,
        );
      },
      3 * PHASE_TIMEOUT_MS + 60_000,
    );
  });
});
