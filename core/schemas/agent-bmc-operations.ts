// POST /v1/agents/bmc-operations/get and /put: the BMC operation ledger a site's agents
// share (agent/site/remote-operation-ledger.ts). A record is what agent/bmc/operations.ts
// keeps: what was sent to which BMC, and its outcome; never a credential.
import { z } from 'zod';
import { MAX_OPERATION_ID } from '../bmc-operation-id';
import { stepScope } from './agent-bmc-access';

export const operationIdSchema = z
  .string()
  .max(MAX_OPERATION_ID)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@/-]*$/, 'an operation id is <workflowId>/<stepKey>/<command> in letters, digits and ._:@/-');

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** Any JSON value (z.json()'s own recursion has no name, so OpenAPI got a $ref to nothing): a named component. */
const jsonValueSchema: z.ZodType<JsonValue> = z
  .lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]))
  .meta({ id: 'JsonValue' });

/** The ledger's states: started = sent or about to be, outcome not recorded. */
export const ledgerStates = ['started', 'succeeded', 'failed'] as const;
export type LedgerState = (typeof ledgerStates)[number];

export const operationRecordSchema = z
  .object({
    operationId: operationIdSchema,
    kind: z.string().min(1).max(512),
    bmc: z.string().min(1).max(512),
    state: z.enum(ledgerStates),
    result: jsonValueSchema.optional(),
    error: z
      .object({ code: z.string().min(1).max(64), message: z.string().max(4096), outcomeUnknown: z.boolean() })
      .strict()
      .optional(),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().optional(),
  })
  .strict();
export type OperationRecordInput = z.infer<typeof operationRecordSchema>;

/** The step's scope (the operation id must be one of its workflow's) and the operation. */
export const bmcOperationGetSchema = z.object({ ...stepScope, operationId: operationIdSchema }).strict();
export type BmcOperationGet = z.infer<typeof bmcOperationGetSchema>;

export const bmcOperationPutSchema = z
  .object({
    ...stepScope,
    /** The state the caller last saw ('none': no record); the write is refused (CONFLICT) if it moved since. */
    expected: z.enum(['none', ...ledgerStates]),
    operation: operationRecordSchema,
  })
  .strict();
export type BmcOperationPut = z.infer<typeof bmcOperationPutSchema>;

export const bmcOperationAnswerSchema = z.object({
  operation: operationRecordSchema.extend({ agentNodeId: z.string(), updatedAt: z.string() }).nullable(),
});
export type BmcOperationAnswer = z.infer<typeof bmcOperationAnswerSchema>;
