// site.httpProxy: one HTTP request to an agentless machine on the site's network, for a
// running step of that machine. The control plane names the machine's addresses and BMC
// host (POST /v1/agents/proxy-targets); proxy-guard.ts decides; redirects are not
// followed (one could lead to a BMC); answers are capped.
import { IronflowError, parseWith } from '../../../core/errors';
import { HTTP_PROXY_MAX_ANSWER_BYTES, httpProxyWithSchema } from '../../../core/steps/site-commands';
import type { ProxyTargets } from '../../../core/schemas/agent-proxy-targets';
import { stepScope } from '../../common/step-scope';
import { checkProxyUrl } from '../proxy-guard';
import type { SiteStep, SiteStepDeps } from './deps';

const MAX_ANSWER_BYTES = HTTP_PROXY_MAX_ANSWER_BYTES;

/** Reads at most `max + 1` bytes of the body, so a machine streaming without end cannot exhaust memory. */
async function readCapped(response: Response, max: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  while (size <= max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value));
    size += value.length;
  }
  await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks);
}

export function httpProxyStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    const request = parseWith(httpProxyWithSchema, input.with);
    const targets = await deps.client.signedPost<ProxyTargets>(deps.signer, '/v1/agents/proxy-targets', stepScope(input));
    const bmcHosts = new Set([...deps.drivenBmcHosts, ...(targets.bmcHost ? [targets.bmcHost.toLowerCase()] : [])]);
    const url = checkProxyUrl(request.url, { machineAddresses: targets.addresses, bmcHosts, bmcNetworks: deps.bmcNetworks });
    let response: Response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(request.timeoutMs),
      });
    } catch (error) {
      throw new IronflowError('DRIVER_ERROR', `site.httpProxy: ${url.origin} did not answer: ${(error as Error).message}`, { url: url.toString() });
    }
    let bytes: Buffer;
    try {
      bytes = await readCapped(response, MAX_ANSWER_BYTES);
    } catch (error) {
      throw new IronflowError('DRIVER_ERROR', `site.httpProxy: reading the answer of ${url.origin} failed: ${(error as Error).message}`, {
        url: url.toString(),
      });
    }
    deps.log.info('proxied a request', {
      nodeId: input.target.nodeId,
      workflowId: input.workflowId,
      method: request.method,
      url: url.toString(),
      status: response.status,
    });
    return {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: bytes.subarray(0, MAX_ANSWER_BYTES).toString('utf8'),
      truncated: bytes.length > MAX_ANSWER_BYTES,
    };
  };
}
