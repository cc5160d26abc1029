// Two sockets piped into each other, both ended when either fails: a relay's one connection.
import type net from 'node:net';

export function spliceSockets(inbound: net.Socket, outbound: net.Socket): void {
  inbound.pipe(outbound).pipe(inbound);
  const end = () => {
    inbound.destroy();
    outbound.destroy();
  };
  inbound.on('error', end);
  outbound.on('error', end);
}
