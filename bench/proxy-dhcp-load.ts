// The client side of bench/proxy-dhcp.ts, run inside the bench's client namespace: PXE
// DISCOVERs (test/helpers/pxe-request.ts, arch 0) broadcast to 67 from 0.0.0.0:68, answers
// matched by xid. Argument: JSON, one of
//   { mode: 'rate', macs, concurrency, seconds, timeoutMs }: a closed loop of `concurrency`
//     outstanding DISCOVERs over the MACs in turn; answers/s and latency percentiles;
//   { mode: 'burst', known, unknown, windowMs, waitMs }: each MAC sends one DISCOVER at a
//     random moment within windowMs; then how many answers each MAC got.
// Prints one JSON line with the result.
import dgram from 'node:dgram';
import { pxeRequest } from '../test/helpers/pxe-request';
import { percentile } from './lib/percentile';

type RateArgs = { mode: 'rate'; macs: string[]; concurrency: number; seconds: number; timeoutMs: number };
type BurstArgs = { mode: 'burst'; known: string[]; unknown: string[]; windowMs: number; waitMs: number };
const args = JSON.parse(process.argv[2] ?? '{}') as RateArgs | BurstArgs;

const socket = dgram.createSocket('udp4');
await new Promise<void>((resolve) => socket.bind(68, '0.0.0.0', resolve));
socket.setBroadcast(true);
const discover = (mac: string, xid: number) => socket.send(pxeRequest({ mac, xid, messageType: 1, arch: 0 }), 67, '255.255.255.255');
const xidOf = (message: Buffer) => (message.length >= 8 && message[0] === 2 ? message.readUInt32BE(4) : -1);

if (args.mode === 'rate') {
  const pending = new Map<number, { sent: bigint; timer: NodeJS.Timeout; slot: () => void }>();
  const latenciesMs: number[] = [];
  let nextXid = 1;
  let lost = 0;
  let stray = 0;
  const end = Date.now() + args.seconds * 1000;
  const slots: Promise<void>[] = [];
  socket.on('message', (message) => {
    const request = pending.get(xidOf(message));
    if (!request) {
      stray += 1;
      return;
    }
    latenciesMs.push(Number(process.hrtime.bigint() - request.sent) / 1e6);
    pending.delete(xidOf(message));
    clearTimeout(request.timer);
    request.slot();
  });
  const started = process.hrtime.bigint();
  for (let s = 0; s < args.concurrency; s++) {
    slots.push(
      new Promise<void>((resolveSlot) => {
        const next = () => {
          if (Date.now() >= end) return resolveSlot();
          const xid = nextXid++;
          const timer = setTimeout(() => {
            pending.delete(xid);
            lost += 1;
            next();
          }, args.timeoutMs);
          pending.set(xid, { sent: process.hrtime.bigint(), timer, slot: next });
          discover(args.macs[xid % args.macs.length] as string, xid);
        };
        next();
      }),
    );
  }
  await Promise.all(slots);
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  latenciesMs.sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({ answered: latenciesMs.length, lost, stray, elapsedS, answersPerS: latenciesMs.length / elapsedS, p50Ms: percentile(latenciesMs, 50), p99Ms: percentile(latenciesMs, 99) })}\n`,
  );
} else {
  const macByXid = new Map<number, string>();
  const answers = new Map<string, number>();
  const firstAnswerMs: number[] = [];
  const sentAt = new Map<number, bigint>();
  socket.on('message', (message) => {
    const xid = xidOf(message);
    const mac = macByXid.get(xid);
    if (!mac) return;
    if (!answers.has(mac)) firstAnswerMs.push(Number(process.hrtime.bigint() - (sentAt.get(xid) as bigint)) / 1e6);
    answers.set(mac, (answers.get(mac) ?? 0) + 1);
  });
  const started = Date.now();
  const all = [...args.known, ...args.unknown];
  await Promise.all(
    all.map(
      (mac, i) =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            const xid = 0x100000 + i;
            macByXid.set(xid, mac);
            sentAt.set(xid, process.hrtime.bigint());
            discover(mac, xid);
            resolve();
          }, Math.random() * args.windowMs),
        ),
    ),
  );
  const sentWithinMs = Date.now() - started;
  await new Promise((r) => setTimeout(r, args.waitMs));
  firstAnswerMs.sort((a, b) => a - b);
  const count = (macs: string[], n: (c: number) => boolean) => macs.filter((m) => n(answers.get(m) ?? 0)).length;
  process.stdout.write(
    `${JSON.stringify({
      sentWithinMs,
      knownAnsweredOnce: count(args.known, (c) => c === 1),
      knownUnanswered: count(args.known, (c) => c === 0),
      knownAnsweredTwiceOrMore: count(args.known, (c) => c > 1),
      unknownAnswered: count(args.unknown, (c) => c > 0),
      p50Ms: percentile(firstAnswerMs, 50),
      p99Ms: percentile(firstAnswerMs, 99),
    })}\n`,
  );
}
socket.close();
