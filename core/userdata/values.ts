// The values user data is rendered with, and their formats. Every value is one line without
// `{{`, so no value can add lines or placeholders to a document; URLs, digests and pins are
// checked at configuration time, so a bad one never reaches a machine.
import { z } from 'zod';
import { idPattern } from '../id-format';

/** Any line break YAML or systemd would honour (including NEL, LS, PS), or another control character. */
const lineBreakOrControl = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/;

export const singleLineValue = z
  .string()
  .min(1)
  .max(4096)
  .refine((v) => !lineBreakOrControl.test(v), 'a value must be a single line without control characters')
  .refine((v) => !v.includes('{{'), 'a value may not contain {{');

/** A plain argument for sh and systemd: http(s), host, optional port and path, nothing they would expand or split on. */
export const controlPlaneUrlSchema = singleLineValue.pipe(
  z
    .string()
    .regex(
      /^https?:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?(\/[A-Za-z0-9._~\/-]*)?$/,
      'controlPlaneUrl is an http(s) URL of host, port and path only: no spaces, quotes, or shell and systemd special characters',
    ),
);

/** Single-quoted for sh -c, so a presigned URL's & and % are fine; no quotes, backslashes or whitespace. */
export const agentUrlSchema = singleLineValue.pipe(
  z.string().regex(/^https?:\/\/[^\s'"\\`]+$/, 'agentUrl is an http(s) URL without quotes, backslashes or whitespace'),
);

export const agentSha256Schema = singleLineValue.pipe(z.string().regex(/^[0-9a-f]{64}$/, 'agentSha256 is 64 lower-case hex digits'));

/** sha256/ plus the base64 SHA-256 digest of an SPKI (32 bytes: 43 characters and one =). */
export const pinSchema = singleLineValue.pipe(
  z.string().regex(/^sha256\/[A-Za-z0-9+/]{43}=$/, 'a pin is sha256/ plus the base64 SHA-256 digest of the key (44 characters)'),
);

export const nodeIdSchema = singleLineValue.pipe(z.string().regex(idPattern('node'), 'expected a node id'));

/** A bearer: `<scheme>_<id>.<secret>` with base64url characters only. */
export const joinTokenSchema = singleLineValue.pipe(
  z
    .string()
    .max(512)
    .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a join token is <scheme>_<id>.<secret>'),
);

export const pinNames = ['servingCaPin', 'joinSigningPin', 'joinEncryptionPin'] as const;
export type PinName = (typeof pinNames)[number];
export type Pins = Record<PinName, string>;

/** All three pins or none: a real agent refuses to bootstrap with a partial set. */
export const pinsSchema = z
  .object({ servingCaPin: pinSchema.optional(), joinSigningPin: pinSchema.optional(), joinEncryptionPin: pinSchema.optional() })
  .strict()
  .superRefine((pins, ctx) => {
    const missing = pinNames.filter((name) => pins[name] === undefined);
    if (missing.length > 0 && missing.length < pinNames.length) {
      ctx.addIssue({ code: 'custom', path: [missing[0] as string], message: `pins come as a set of three; ${missing.join(', ')} missing` });
    }
  })
  .transform((pins) => (pins.servingCaPin && pins.joinSigningPin && pins.joinEncryptionPin ? (pins as Pins) : undefined));

/** The variables every template gets; the pins only when configured. */
export interface UserDataVariables {
  nodeId: string;
  /** The node id with _ turned into - (a valid host name). */
  hostname: string;
  joinToken: string;
  controlPlaneUrl: string;
  agentUrl: string;
  agentSha256: string;
  servingCaPin?: string;
  joinSigningPin?: string;
  joinEncryptionPin?: string;
}

export const variableNames = ['nodeId', 'hostname', 'joinToken', 'controlPlaneUrl', 'agentUrl', 'agentSha256', ...pinNames] as const;

export function hostnameOf(nodeId: string): string {
  return nodeId.replace(/_/g, '-');
}
