// Sealed histories for a process of the control plane, or for the agent gateway acting for
// agents (which hold no history key): the codec its Temporal clients and workers use.
import { existsSync } from 'node:fs';
import type { PayloadCodec } from '@temporalio/common';
import type { IronflowConfig } from '../config';
import { SealingCodec } from './codec';
import { historyKeysFile, loadHistoryKeyRing } from './key-ring';

export { isSealed, KEY_ID_METADATA, SEALED_ENCODING, SealingCodec, UnsealError } from './codec';
export { HISTORY_KEYS_FILE, historyKeysFile, loadHistoryKeyRing } from './key-ring';

/**
 * The history codec of these settings, for a Temporal Client's or Worker's
 * `dataConverter.payloadCodecs` (see `sealedDataConverter`):
 * - `temporal.sealHistories` on: seals every payload with the key ring's current key
 *   (the ring is created in the data dir on first start) and unseals with any of its keys;
 * - off, with a key ring left from when it was on: unseals only, so workflows sealed then
 *   still replay and read, and new payloads are written as they are;
 * - off and no key ring: undefined (nothing was ever sealed).
 * The agent gateway calls it to seal agents' activity payloads on their behalf.
 */
export function sealingCodecFor(config: IronflowConfig): PayloadCodec | undefined {
  if (!historiesMayBeSealed(config)) return undefined;
  return new SealingCodec(loadHistoryKeyRing(config.dataDir), { seal: config.temporal.sealHistories });
}

/** Sealing is on, or was (its key ring is there): readers of histories need the codec. */
export function historiesMayBeSealed(config: IronflowConfig): boolean {
  return config.temporal.sealHistories || existsSync(historyKeysFile(config.dataDir));
}

/** Where the API serves the Temporal Web UI's remote codec (api/routes/codec.ts): under the console, whose sign-in cookie its callers present. */
export const CODEC_PATH = '/console/codec';

/** The codec endpoint's URL, as the Web UI (`--ui-codec-endpoint`) and the temporal CLI (`--codec-endpoint`) take it. */
export const codecEndpointUrl = (config: IronflowConfig): string => `${config.api.publicUrl}${CODEC_PATH}`;

/** The `dataConverter` option of a control-plane Client or Worker. */
export function sealedDataConverter(config: IronflowConfig): { payloadCodecs: PayloadCodec[] } {
  const codec = sealingCodecFor(config);
  return { payloadCodecs: codec ? [codec] : [] };
}
