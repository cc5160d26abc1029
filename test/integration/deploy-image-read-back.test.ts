// deploy.image reads back what it wrote: after fsync the written range is read from the disk
// and must hash as the bytes that went to it (else DRIVER_ERROR read-back-mismatch). The
// image comes from a real HTTP server; the step is the ramdisk's own.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { deployImageStep } from '../../agent/ramdisk/steps/deploy-image';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { AgentLog } from '../../agent/common/log';

const image = Buffer.from(Array.from({ length: 3 * 1024 * 1024 + 123 }, (_, i) => (i * 7919) % 251));
const sha256 = createHash('sha256').update(image).digest('hex');
let server: http.Server;
let source: string;

beforeAll(async () => {
  server = http.createServer((_req, res) => res.end(image));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  source = `http://127.0.0.1:${(server.address() as AddressInfo).port}/os.img`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function stepFor(disk: { name: string; path: string; sizeBytes: number }) {
  return deployImageStep({
    nodeId: 'node_readback',
    key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    certificatePem: () => '',
    hardware: {
      system: { productUuid: null, vendor: 't', model: 't', serial: 't', arch: 'x86_64', uefi: false, cpus: 1, memoryBytes: 1 },
      nics: [],
      disks: [disk],
      gpus: [],
      loadKexec: () => Promise.reject(new Error('this machine does not kexec')),
    },
    client: new ControlPlaneClient('http://127.0.0.1:9'),
    log: new AgentLog(() => undefined),
    heartbeat: () => undefined,
  });
}

const input = {
  workflowId: 'wf',
  stepKey: 'steps[0]',
  use: 'deploy.image',
  target: { nodeId: 'node_readback', siteId: 'site_x' },
  with: { source: '', sha256, sizeBytes: image.length },
};

describe('deploy.image read-back', () => {
  it('reads back the written range and reports its digest', async () => {
    const file = path.join(mkdtempSync(path.join(inject('runDir'), 'readback-')), 'disk');
    writeFileSync(file, Buffer.alloc(8 * 1024 * 1024));
    const out = (await stepFor({ name: 'vda', path: file, sizeBytes: 8 * 1024 * 1024 })({ ...input, with: { ...input.with, source } } as never)) as {
      readBackSha256: string;
      bytesWritten: number;
    };
    expect(out).toMatchObject({ readBackSha256: sha256, bytesWritten: image.length });
    expect(readFileSync(file).subarray(0, image.length).equals(image)).toBe(true);
  });
});
