// Join (agents): a join token plus a PKCS#10 CSR → a certificate chain; renewal with the
// current certificate. No API credential: the token or the certificate is the credential.
import { z } from 'zod';

const pemSchema = z.string().min(1).max(16_384);

export const joinSchema = z
  .object({
    /** The bearer `ifjt_<id>.<secret>`. */
    token: z.string().min(1).max(512),
    /** PEM `CERTIFICATE REQUEST`, ECDSA P-256 or Ed25519. */
    csr: pemSchema,
    /** A ramdisk's evidence for the discovery attestor (services/attestors/discovery-attestor.ts). */
    discovery: z
      .object({
        /** The site agent's signed discovery assertion, as its iPXE script gave it (if.assertion). */
        assertion: z.string().min(1).max(4096),
        /** The MACs the machine has. */
        macs: z.array(z.string().max(32)).min(1).max(64),
        /** The machine's SMBIOS product UUID, when it can read one. */
        productUuid: z.string().max(36).optional(),
      })
      .strict()
      .optional(),
    /** The node an installed OS was installed for (`--node-id`): the provisioned attestor refuses another. */
    nodeId: z.string().min(1).max(64).optional(),
  })
  .strict();
export type JoinInput = z.infer<typeof joinSchema>;

export const renewSchema = z
  .object({
    /** The agent's current certificate (PEM), one this CA issued, unexpired and unrevoked. */
    certificate: pemSchema,
    /** A new CSR signed by the same key as the current certificate (proof of possession). */
    csr: pemSchema,
  })
  .strict();
export type RenewInput = z.infer<typeof renewSchema>;

export const issuedCertificateSchema = z.object({
  nodeId: z.string(),
  role: z.string(),
  siteId: z.string().nullable(),
  /** [leaf, CA], PEM. */
  certificateChain: z.array(z.string()),
  expiresAt: z.string(),
});

/** Where an agent's worker reaches Temporal: the agent gateway, with mTLS; its certificate chains to the node CA (the chain's last). */
export const agentTemporalSchema = z.object({
  /** The agent gateway, host:port. */
  address: z.string(),
  namespace: z.string(),
  /** The one queue the certificate may poll. */
  taskQueue: z.string(),
  /** The name on the gateway's certificate (agents dial an address, and verify this name). */
  serverName: z.string(),
});
export type AgentTemporal = z.infer<typeof agentTemporalSchema>;

export const joinAnswerSchema = issuedCertificateSchema.extend({ temporal: agentTemporalSchema });
export type JoinAnswer = z.infer<typeof joinAnswerSchema>;

export const caSchema = z.object({ certificate: z.string() });
