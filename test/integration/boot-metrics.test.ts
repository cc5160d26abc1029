// The site agent's GET /metrics ([metrics] address) after real exchanges with its boot
// server on loopback sockets: proxy DHCP (a PXE REQUEST on the boot-server port, answered
// back to its source), TFTP (a read to the end, refusals) and HTTP. Counts are by protocol
// and kind only: no MAC, file name or URL of the (untrusted) network names a series. With
// [metrics] temporal_sdk_address, the agent (its own process, as operators run it) serves
// its Temporal worker's SDK metrics too.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { BootEntryStore } from '../../agent/boot/entries';
import type { SiteAgent } from '../../agent/site/main';
import { activeAgent, startBootSite, until, type BootSite } from '../helpers/boot-site';
import { freePort } from '../helpers/ports';
import { pxeRequest } from '../helpers/pxe-request';
import { siteAgentFixture } from '../helpers/site-agent';
import { spawnSiteAgent } from '../helpers/agent-process';
import { ackPacket, requestPacket, tftpClient } from '../helpers/tftp';

const KNOWN_MAC = '52:54:00:16:00:01';
const UNKNOWN_MAC = '52:54:00:16:00:99';
const BOOT_FILE = 'undionly.kpxe';

let site: BootSite;
let agent: SiteAgent;
let ports: { dhcp: number; pxe: number; tftp: number };

beforeAll(async () => {
  site = await startBootSite('boot-metrics-site');
  ports = { dhcp: await freePort(), pxe: await freePort(), tftp: await freePort() };
  const tftpRoot = mkdtempSync(path.join(inject('runDir'), 'boot-metrics-tftp-'));
  writeFileSync(path.join(tftpRoot, BOOT_FILE), Buffer.alloc(300, 7));
  const fixture = siteAgentFixture(site.t.cp.url, {
    proxyDhcp: true,
    boot: [
      'tftp = true',
      'server_ip = "127.0.0.1"',
      `tftp_root = ${JSON.stringify(tftpRoot)}`,
      `dhcp_port = ${ports.dhcp}`,
      `pxe_port = ${ports.pxe}`,
      `tftp_port = ${ports.tftp}`,
    ],
    metricsAddress: '127.0.0.1:0',
  });
  // A boot entry the agent loads at its start: the MAC proxy DHCP answers.
  const dataDir = path.join(fixture.dir, 'data');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  new BootEntryStore(dataDir).put([
    {
      mac: KNOWN_MAC,
      productUuid: '4c4c4544-0042-3510-8052-b4c04f4e3732',
      arch: 'BIOS',
      nodeId: 'node_1',
      workflowId: 'wf_1',
      tokenRef: 'sec_abc',
      notAfter: new Date(Date.now() + 3_600_000).toISOString(),
    },
  ]);
  agent = await fixture.start({ IRONFLOW_JOIN_TOKEN: site.siteToken });
  await activeAgent(agent);
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await site?.t.close();
});

const valueOf = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('site agent /metrics', () => {
  it('counts proxy DHCP, TFTP and HTTP answers and refusals by kind', async () => {
    const url = agent.metrics?.url as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

    // Proxy DHCP on the PXE boot-server port: a known MAC is answered, an unknown one and a DISCOVER are not.
    const dhcp = await tftpClient();
    const send = (packet: Buffer) => dhcp.socket.send(packet, ports.pxe, '127.0.0.1');
    send(pxeRequest({ mac: KNOWN_MAC, xid: 1, messageType: 3, arch: 0, ciaddr: '127.0.0.1' }));
    expect(await dhcp.next()).not.toBeNull();
    send(pxeRequest({ mac: UNKNOWN_MAC, xid: 2, messageType: 3, arch: 0, ciaddr: '127.0.0.1' }));
    send(pxeRequest({ mac: KNOWN_MAC, xid: 3, messageType: 1, arch: 0 }));
    expect(await dhcp.next(500)).toBeNull();
    dhcp.close();

    // TFTP: one read to its end (300 bytes: one DATA block), a missing file and a write refused.
    const tftp = await tftpClient();
    tftp.socket.send(requestPacket(1, BOOT_FILE, 'octet'), ports.tftp, '127.0.0.1');
    const data = await tftp.next();
    expect(data?.packet.readUInt16BE(0)).toBe(3);
    await new Promise((sent) => tftp.socket.send(ackPacket(1), data?.port as number, '127.0.0.1', sent));
    tftp.close();
    // From other ports: a request from the same address and port as a running transfer is its retransmission.
    for (const request of [requestPacket(1, 'no-such-file.efi', 'octet'), requestPacket(2, BOOT_FILE, 'octet')]) {
      const refused = await tftpClient();
      refused.socket.send(request, ports.tftp, '127.0.0.1');
      expect((await refused.next())?.packet.readUInt16BE(0)).toBe(5);
      refused.close();
    }

    // HTTP: chain.ipxe, and a path no route owns.
    const boot = agent.bootServer?.url as string;
    expect((await fetch(`${boot}/boot/chain.ipxe`)).status).toBe(200);
    expect((await fetch(`${boot}/boot/${UNKNOWN_MAC}/nothing`)).status).toBe(404);

    const scrape = async () => {
      const answer = await fetch(url);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return answer.text();
    };
    const text = await until('the TFTP transfer to be counted as done', async () => {
      const t = await scrape();
      return valueOf(t, 'ironflow_boot_tftp_transfers_total{outcome="done"}') === 1 && t;
    });
    expect(valueOf(text, 'ironflow_boot_dhcp_packets_total{port="pxe",decision="answered"}')).toBe(1);
    expect(valueOf(text, 'ironflow_boot_dhcp_packets_total{port="pxe",decision="unknown-mac"}')).toBe(1);
    expect(valueOf(text, 'ironflow_boot_dhcp_packets_total{port="pxe",decision="not-a-boot-request"}')).toBe(1);
    expect(valueOf(text, 'ironflow_boot_tftp_requests_total{decision="read"}')).toBe(1);
    expect(valueOf(text, 'ironflow_boot_tftp_requests_total{decision="refused"}')).toBe(2);
    expect(valueOf(text, 'ironflow_boot_http_responses_total{route="/boot/chain.ipxe",status="200"}')).toBe(1);
    expect(valueOf(text, 'ironflow_boot_http_responses_total{route="none",status="404"}')).toBe(1);
    for (const untrusted of [KNOWN_MAC, UNKNOWN_MAC, BOOT_FILE, 'no-such-file', 'nothing']) expect(text).not.toContain(untrusted);
  });

  it('serves GET /metrics only', async () => {
    const base = (agent.metrics?.url as string).replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
  });
});

describe('site agent /metrics with [metrics] temporal_sdk_address', () => {
  it("serves its Temporal worker's SDK metrics after the boot server's counts", async () => {
    const [metricsPort, sdkPort] = [await freePort(), await freePort()];
    const fixture = siteAgentFixture(site.t.cp.url, { metricsAddress: `127.0.0.1:${metricsPort}`, temporalSdkMetricsAddress: `127.0.0.1:${sdkPort}` });
    const agentProcess = spawnSiteAgent(fixture.configFile, { IRONFLOW_JOIN_TOKEN: site.siteToken });
    try {
      const running = await agentProcess.waitForLog('site agent running', 60_000);
      const taskQueue = running.taskQueue as string;
      const slots = (text: string) =>
        text
          .split('\n')
          .find(
            (l) =>
              l.startsWith('temporal_worker_task_slots_available{') && l.includes(`task_queue="${taskQueue}"`) && l.includes('worker_type="ActivityWorker"'),
          );
      const text = await until("the agent's worker in the SDK's metrics", async () => {
        const t = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return slots(t) && t;
      });
      expect(Number(slots(text)?.split(' ').at(-1))).toBeGreaterThan(0);
      // The boot server's own counts come first, in the same answer.
      expect(text.indexOf('ironflow_boot_dhcp_packets_total')).toBeGreaterThanOrEqual(0);
      expect(text.indexOf('ironflow_boot_dhcp_packets_total')).toBeLessThan(text.indexOf('temporal_worker_task_slots_available'));
    } finally {
      agentProcess.child.kill('SIGTERM');
      await agentProcess.exited;
    }
  }, 90_000);
});
