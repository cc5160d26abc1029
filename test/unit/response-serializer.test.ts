// api/response-serializer.ts: answers are written from the zod schema's JSON Schema; with
// checkResponses (the suite's setting) each answer is checked by zod and compared too.
import { ResponseSerializationError } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { differenceAt, responseSerializerCompiler } from '../../api/response-serializer';
import { metalView } from '../../core/metal/view';
import { metalNodeListSchema } from '../../core/schemas/metal';

const route = (schema: z.ZodType) => ({ schema, method: 'GET', url: '/v1/example' });
const fast = (schema: z.ZodType) => responseSerializerCompiler(false)(route(schema));
const checked = (schema: z.ZodType) => responseSerializerCompiler(true)(route(schema));

describe('response serializer', () => {
  it("writes a page of metal nodes as zod's check and JSON.stringify do, to the character", () => {
    const row = {
      id: 'node_1',
      tenantId: 'root',
      siteId: 'site_1',
      poolId: 'pool_1',
      role: 'machine',
      provisionState: 'active',
      provisionPhase: null,
      version: 3,
      maintenance: true,
      maintenanceReason: 'disk "sdb" \u2028 failing',
      maintenanceSource: 'operator',
      power: 'on',
      bmcDriver: 'redfish',
      bmcAddress: 'https://10.0.0.9',
      bmcCredentialsRef: 'sec_1',
      macs: ['52:54:00:00:00:01'],
      macSource: 'operator',
      discoveredMac: null,
      productUuid: null,
      arch: 'x86_64',
      uefi: true,
      hardwareProfile: 'gpu-large',
      driverBindings: { power: { driver: 'redfish', config: { port: '443' } }, boot: { driver: 'ipxe' } },
      labels: { rack: 'r1', é: 'ü' },
      deployProfile: { id: 'ubuntu', version: 2 },
      releaseWipe: null,
      workflowId: 'lifecycle-node_1',
      failedFrom: null,
      lastError: null,
      createdAt: new Date('2026-12-02T10:00:00Z'),
      updatedAt: new Date('2026-12-02T11:00:00Z'),
    } as unknown as Parameters<typeof metalView>[0];
    const body = { nodes: [metalView(row), metalView({ ...row, id: 'node_2', maintenance: false })], nextCursor: 'node_2' };
    const expected = JSON.stringify(metalNodeListSchema.encode(body));
    expect(fast(metalNodeListSchema)(body)).toBe(expected);
    expect(checked(metalNodeListSchema)(body)).toBe(expected);
  });

  it('never writes a property the schema does not declare', () => {
    const schema = z.object({ id: z.string(), nested: z.object({ name: z.string() }) });
    const data = { id: 'cred_1', secretHash: 'abc', nested: { name: 'n', token: 'ifk_secret' } };
    expect(fast(schema)(data)).toBe('{"id":"cred_1","nested":{"name":"n"}}');
    expect(checked(schema)(data)).toBe('{"id":"cred_1","nested":{"name":"n"}}');
  });

  it('writes nullable objects, enums, arrays, records and literals, null or not, as zod does, and no undeclared property of them', () => {
    const schema = z.object({
      image: z.object({ id: z.string(), version: z.number() }).nullable(),
      source: z.enum(['operator', 'failure']).nullable(),
      macs: z.array(z.string()).nullable(),
      labels: z.record(z.string(), z.string()).nullable(),
      kind: z.literal('metal').nullable(),
    });
    const set = {
      image: { id: 'ubuntu', version: 2, token: 'ifk_secret' },
      source: 'failure',
      macs: ['52:54:00:00:00:01'],
      labels: { rack: 'r1' },
      kind: 'metal',
    };
    const unset = { image: null, source: null, macs: null, labels: null, kind: null };
    expect(fast(schema)(set)).toBe(
      '{"image":{"id":"ubuntu","version":2},"source":"failure","macs":["52:54:00:00:00:01"],"labels":{"rack":"r1"},"kind":"metal"}',
    );
    for (const data of [set, unset]) {
      const expected = JSON.stringify(schema.encode(data as z.input<typeof schema>));
      expect(fast(schema)(data)).toBe(expected);
      expect(checked(schema)(data)).toBe(expected);
    }
  });

  it('leaves out an unknown-typed property that is undefined, as zod does', () => {
    const schema = z.object({ id: z.string(), result: z.unknown() });
    expect(fast(schema)({ id: 'op_1', result: undefined })).toBe('{"id":"op_1"}');
    expect(checked(schema)({ id: 'op_1', result: undefined })).toBe('{"id":"op_1"}');
  });

  it("checked, refuses what zod refuses; unchecked, it writes only the schema's types", () => {
    const schema = z.object({ state: z.enum(['ready', 'active']) });
    expect(() => checked(schema)({ state: 'lost' })).toThrow(ResponseSerializationError);
    // The trade the fast path makes (its header says so): no enum check without checkResponses.
    expect(fast(schema)({ state: 'lost' })).toBe('{"state":"lost"}');
  });

  it('checked, refuses an answer the two write differently, and no value reaches the error', () => {
    // zod writes an undefined array element as null (JSON.stringify does); fast-json-stringify writes no JSON.
    const schema = z.object({ secret: z.string(), items: z.array(z.unknown()) });
    let error: unknown;
    try {
      checked(schema)({ secret: 'ifk_do_not_print', items: [undefined, 1] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ResponseSerializationError);
    const message = (error as Error & { cause: z.ZodError }).cause.issues[0]?.message ?? '';
    expect(message).toBe('fast-json-stringify and zod answer differently at (not JSON)');
    expect(JSON.stringify(error)).not.toContain('ifk_do_not_print');
  });

  it('names where two answers differ by keys and indexes, never by value, and ignores property order', () => {
    const expected = { events: [{ id: 'evt_1', data: { bearer: 'ifk_secret', n: 1 } }], nextCursor: null };
    expect(differenceAt({ nextCursor: null, events: [{ data: { n: 1, bearer: 'ifk_secret' }, id: 'evt_1' }] }, expected)).toBeUndefined();
    expect(differenceAt({ events: [{ id: 'evt_1', data: { bearer: 'ifk_other', n: 1 } }], nextCursor: null }, expected)).toBe('events[0].data.bearer');
    expect(differenceAt({ events: [{ id: 'evt_1', data: { bearer: 'ifk_secret' } }], nextCursor: null }, expected)).toBe('events[0].data.n');
    expect(differenceAt({ events: [], nextCursor: null }, expected)).toBe('events');
    expect(differenceAt('x', expected)).toBe('(the whole answer)');
  });

  it('refuses at start a response schema with no JSON Schema, naming the route and the fix', () => {
    expect(() => fast(z.object({ at: z.date() }))).toThrow(/GET \/v1\/example: .*an ISO string, not a Date/);
  });
});
