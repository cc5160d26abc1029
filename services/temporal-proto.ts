// Temporal's protobuf definitions (@temporalio/proto, a CommonJS module whose exports Node's
// ESM loader cannot name): the typed message classes, and the services' method names.
import { createRequire } from 'node:module';

type TemporalProto = typeof import('@temporalio/proto');

const proto = createRequire(import.meta.url)('@temporalio/proto') as TemporalProto & { lookupService(name: string): { methods: Record<string, unknown> } };

export const temporal: TemporalProto['temporal'] = proto.temporal;

export function methodNamesOf(serviceName: string): string[] {
  return Object.keys(proto.lookupService(serviceName).methods);
}
