// Fuzz of the TFTP listener's parsing and decisions: 110,000 malformed datagrams from a fixed
// seed (replayable), each malformed by construction. None throws, every one is dropped
// unanswered (no ERROR, no transfer), and the heap does not grow with them.
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { decideRequest, defaultTftpLimits } from '../../agent/boot/tftp/handler';
import { parseClientReply } from '../../agent/boot/tftp/packet';
import { malformedPacket, seededRandom } from '../helpers/tftp';

const PACKETS = 110_000;
const SEED = 0x1f7f9;

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

describe('TFTP parsing under malformed input', () => {
  it(`drops ${PACKETS} malformed requests unanswered, without throwing or holding memory`, () => {
    const random = seededRandom(SEED);
    const context = { active: true, transfers: 0, transfersFromSource: 0, duplicate: false };
    const before = heapAfterGc();
    const answered: string[] = [];
    for (let n = 0; n < PACKETS; n++) {
      const packet = malformedPacket(random, n);
      const decision = decideRequest(packet, context, defaultTftpLimits);
      if (decision.action !== 'drop' || decision.why !== 'malformed') answered.push(`#${n} ${packet.toString('hex')} → ${JSON.stringify(decision)}`);
    }
    const growth = heapAfterGc() - before;
    expect(answered.slice(0, 5)).toEqual([]);
    expect(growth).toBeLessThan(4 * 1024 * 1024);
  });

  it(`takes no random datagram as a client's ACK unless it is exactly one`, () => {
    const random = seededRandom(SEED + 1);
    let replies = 0;
    for (let n = 0; n < PACKETS; n++) {
      const packet = Buffer.from(Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 256)));
      const reply = parseClientReply(packet);
      const isAck = packet.length === 4 && packet.readUInt16BE(0) === 4;
      const isError = packet.length >= 4 && packet.readUInt16BE(0) === 5;
      if (reply) replies += 1;
      expect(reply === null).toBe(!isAck && !isError);
    }
    expect(replies).toBeGreaterThan(0);
  });
});
