// Answers written by fast-json-stringify from the JSON Schema of each route's zod response
// schema (zod stays the one source). zod's own serializer checks the answer by building a
// full copy of it, then JSON.stringify: for a page of 50 nodes that was 0.16 ms and 180 KB
// of garbage a request, against 0.06 ms and the answer's string alone (bench/README.md, "The
// API"). fast-json-stringify writes only the properties the schema declares, so nothing
// undeclared ever leaves, as with zod. What it does not do is refuse a value of the wrong
// type or outside an enum: with `api.checkResponses` (IRONFLOW_API_CHECK_RESPONSES, on in
// the test suite) each answer is also checked by zod and must serialize to the same JSON
// (property order aside), so every answer the tests make proves the two agree.
import fastJsonStringify from 'fast-json-stringify';
import { ResponseSerializationError } from 'fastify-type-provider-zod';
import { z } from 'zod';

type Serialize = (data: unknown) => string;

interface SerializerRoute {
  schema: unknown;
  method: string;
  url: string;
}

/** Compiled once per schema object: each test file starts many servers from the same schemas. */
const compiled = new WeakMap<z.ZodType, Serialize>();

function isNullSchema(node: unknown): boolean {
  return typeof node === 'object' && node !== null && Object.keys(node).length === 1 && (node as { type?: unknown }).type === 'null';
}

/**
 * zod writes a nullable object, array or enum as `anyOf: [schema, {type: 'null'}]`, which
 * fast-json-stringify decides by running ajv on the value (ajv builds an error object for each
 * null it refuses). The same schema as a type list, `type: ['object', 'null']`, is decided by the
 * value's type alone and writes the same JSON: a page of 50 nodes, four such fields each, in 96
 * against 130 µs, with 17% fewer scavenges (in a slow hour).
 */
function nullableAsTypeList(node: Record<string, unknown>): Record<string, unknown> {
  const { anyOf, ...rest } = node;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return node;
  const other = anyOf.find((branch) => !isNullSchema(branch)) as Record<string, unknown> | undefined;
  if (!other || !anyOf.some(isNullSchema) || typeof other.type !== 'string') return node;
  const merged: Record<string, unknown> = { ...rest, ...other, type: [other.type, 'null'] };
  if (Array.isArray(other.enum)) merged.enum = [...(other.enum as unknown[]), null];
  return merged;
}

/**
 * The JSON Schema fast-json-stringify is given, in every nested schema: nullable objects and
 * enums as type lists (above); and z.unknown() properties (schema `{}`) optional, since zod
 * lists them as required yet accepts them undefined and leaves them out, where
 * fast-json-stringify would throw.
 */
function forSerializer(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forSerializer);
  if (typeof node !== 'object' || node === null) return node;
  const out = nullableAsTypeList(Object.fromEntries(Object.entries(node).map(([key, value]) => [key, forSerializer(value)])));
  const { properties, required } = out as { properties?: Record<string, object>; required?: string[] };
  if (properties && required) out.required = required.filter((name) => Object.keys(properties[name] ?? {}).length > 0);
  return out;
}

function fastSerializer(schema: z.ZodType, method: string, url: string): Serialize {
  const known = compiled.get(schema);
  if (known) return known;
  let serialize: Serialize;
  try {
    const jsonSchema = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'throw' });
    serialize = fastJsonStringify(forSerializer(jsonSchema) as Parameters<typeof fastJsonStringify>[0]);
  } catch (error) {
    throw new Error(
      `${method} ${url}: its response schema has no JSON Schema to serialize by (${String(error).slice(0, 300)}); answer plain JSON types (an ISO string, not a Date; a number, not a bigint)`,
    );
  }
  compiled.set(schema, serialize);
  return serialize;
}

/**
 * The path of the first place two JSON values differ (`events[0].data`), or undefined when they
 * are equal. Property order does not count: fast-json-stringify writes required properties
 * first. The path names keys only, never a value, which can be a secret (a new credential's bearer).
 */
export function differenceAt(written: unknown, expected: unknown, path = ''): string | undefined {
  if (Object.is(written, expected)) return undefined;
  const at = path || '(the whole answer)';
  if (typeof written !== 'object' || typeof expected !== 'object' || written === null || expected === null) return at;
  if (Array.isArray(written) !== Array.isArray(expected)) return at;
  if (Array.isArray(written) && Array.isArray(expected)) {
    if (written.length !== expected.length) return at;
    for (let i = 0; i < written.length; i++) {
      const found = differenceAt(written[i], expected[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  const writtenObject = written as Record<string, unknown>;
  const expectedObject = expected as Record<string, unknown>;
  const keys = new Set([...Object.keys(writtenObject), ...Object.keys(expectedObject)]);
  for (const key of keys) {
    const found = differenceAt(writtenObject[key], expectedObject[key], path ? `${path}.${key}` : key);
    if (found) return found;
  }
  return undefined;
}

/** Fastify's serializer compiler for zod response schemas; `checkResponses` also checks each answer with zod and compares the two answers. */
export function responseSerializerCompiler(checkResponses: boolean) {
  return ({ schema, method, url }: SerializerRoute): Serialize => {
    if (!(schema instanceof z.ZodType)) throw new Error(`${method} ${url}: a response schema must be a zod schema (core/schemas/)`);
    const serialize = fastSerializer(schema, method, url);
    if (!checkResponses) return serialize;
    return (data) => {
      const checked = schema.safeEncode(data);
      if (checked.error) throw new ResponseSerializationError(method, url, { cause: checked.error });
      const text = serialize(data);
      let difference: string | undefined;
      try {
        difference = differenceAt(JSON.parse(text), JSON.parse(JSON.stringify(checked.data)));
      } catch {
        difference = '(not JSON)';
      }
      if (difference) {
        const message = `fast-json-stringify and zod answer differently at ${difference}`;
        throw new ResponseSerializationError(method, url, { cause: new z.ZodError([{ code: 'custom', path: [], input: undefined, message }]) });
      }
      return text;
    };
  };
}
