// The boot server's answers and refusals, by protocol and kind, for the site agent's
// /metrics (services/metrics/listener.ts). Its networks are untrusted, so every label is
// one of a fixed set this code names: never a MAC, a file name, an address or a URL path.
import { Counter, Registry } from 'prom-client';
import type { ProxyDhcpIgnoreReason, ProxyDhcpPort } from './dhcp/handler';
import type { RequestDecision } from './tftp/handler';
import type { TransferOutcome } from './tftp/transfer';

/** What proxy DHCP did with a datagram: answered, one of the handler's reasons to stay silent, or dropped unread. */
type DhcpDecision = 'answered' | ProxyDhcpIgnoreReason | 'oversized' | 'undecodable' | 'failed';

/** What TFTP did with a request on its listening port. */
type TftpDecision = 'read' | 'refused' | `dropped-${Extract<RequestDecision, { action: 'drop' }>['why']}`;

export class BootServerMetrics {
  readonly registry = new Registry();

  private readonly dhcp = new Counter({
    name: 'ironflow_boot_dhcp_packets_total',
    help: 'Proxy DHCP datagrams by port (dhcp 67, pxe 4011) and what was done: answered, or why not',
    labelNames: ['port', 'decision'] as const,
    registers: [this.registry],
  });

  private readonly tftpRequests = new Counter({
    name: 'ironflow_boot_tftp_requests_total',
    help: 'TFTP requests by decision: read (a transfer starts), refused (an ERROR answered) or dropped (silence) and why',
    labelNames: ['decision'] as const,
    registers: [this.registry],
  });

  private readonly tftpTransfers = new Counter({
    name: 'ironflow_boot_tftp_transfers_total',
    help: 'TFTP transfers by how they ended (done, timeout, too-slow, client-error, lease-lost…)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly http = new Counter({
    name: 'ironflow_boot_http_responses_total',
    help: "Boot server HTTP answers by route (the route's path pattern, or none) and status",
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });

  dhcpPacket(port: ProxyDhcpPort, decision: DhcpDecision): void {
    this.dhcp.inc({ port, decision });
  }

  tftpRequest(decision: TftpDecision): void {
    this.tftpRequests.inc({ decision });
  }

  tftpTransfer(outcome: TransferOutcome): void {
    this.tftpTransfers.inc({ outcome });
  }

  /** `route`: a route's own path (a constant of this code) or 'none'. */
  httpResponse(route: string, status: number): void {
    this.http.inc({ route, status: String(status) });
  }
}
