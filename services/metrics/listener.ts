// A process's own GET /metrics on an address of its own, for the processes that serve no API:
// a site agent ([metrics] address) and a control-plane worker process (metrics.workerAddress).
// Its registry in Prometheus' text format, then the Temporal SDK's worker metrics when the
// process exports them. Only that one path and method; nothing else answers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { IronflowError } from '../../core/errors';
import { scrapeSdkMetrics } from '../../core/sdk-metrics';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

export interface MetricsListenerOptions {
  /** host:port, e.g. `127.0.0.1:9466` or `[::1]:9466`. */
  address: string;
  registry: Registry;
  /** Where this process's Temporal runtime exports the SDK's metrics (worker/runtime.ts), appended to each scrape. */
  temporalSdkAddress?: string | undefined;
  /** The setting that names `address`, for the error when it cannot listen: its name as the operator writes it, and its config path. */
  setting: { name: string; path: string };
  log: { info(message: string, fields?: Record<string, unknown>): void; error(message: string, fields?: Record<string, unknown>): void };
}

/** `127.0.0.1:9466` or `[::1]:9466` → host and port. */
function hostAndPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(at + 1)) };
}

export async function startMetricsListener({ address, registry, temporalSdkAddress, setting, log }: MetricsListenerOptions): Promise<MetricsListener> {
  const { host, port } = hostAndPort(address);
  const server = http.createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only GET /metrics is served here\n');
      return;
    }
    Promise.all([registry.metrics(), scrapeSdkMetrics(temporalSdkAddress)]).then(
      ([own, sdk]) => res.writeHead(200, { 'content-type': registry.contentType }).end(sdk ? `${own}\n${sdk}` : own),
      (error: unknown) => {
        log.error('metrics could not be rendered', { error: (error as Error).message });
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new IronflowError(
          'INVALID_CONFIG',
          `the metrics listener cannot listen on ${address} (${error.code ?? error.message}): set ${setting.name} to a free host:port`,
          {
            path: setting.path,
          },
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const url = `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}/metrics`;
  log.info('metrics listening', { url });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
