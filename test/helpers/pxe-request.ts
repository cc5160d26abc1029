// DHCP requests as PXE firmware sends them, byte for byte: the BOOTP header, the magic
// cookie, then message type, max message size, parameter list, client UUID (97), client
// architecture (93), network interface (94), vendor class (60) and, for iPXE, user class
// (77), then END. Shared by the proxy DHCP tests and bench.

export interface PxeRequestSpec {
  mac: string;
  xid: number;
  /** 1 DISCOVER (broadcast to 67) or 3 REQUEST (to 4011 once the client has an address). */
  messageType: 1 | 3;
  /** Option 93; omit for a pre-RFC 4578 client. */
  arch?: number;
  /** 'PXEClient' or 'HTTPClient' (the Arch/UNDI suffix is added), or any other vendor class. */
  vendorClass?: string;
  /** Option 60 is the bare family name, without `:Arch:…:UNDI:…` (some old ROMs). */
  bareVendorClass?: boolean;
  ipxe?: boolean;
  uuid?: string;
  ciaddr?: string;
  giaddr?: string;
  flags?: number;
  /** Extra options as [code, bytes], added before END. */
  extra?: Array<[number, number[]]>;
}

const ipBytes = (ip: string) => ip.split('.').map(Number);

export function pxeRequest(spec: PxeRequestSpec): Buffer {
  const header = Buffer.alloc(240);
  header.writeUInt8(1, 0);
  header.writeUInt8(1, 1);
  header.writeUInt8(6, 2);
  header.writeUInt32BE(spec.xid >>> 0, 4);
  header.writeUInt16BE(4, 8); // secs
  header.writeUInt16BE(spec.flags ?? 0x8000, 10);
  Buffer.from(ipBytes(spec.ciaddr ?? '0.0.0.0')).copy(header, 12);
  Buffer.from(ipBytes(spec.giaddr ?? '0.0.0.0')).copy(header, 24);
  Buffer.from(spec.mac.replaceAll(':', ''), 'hex').copy(header, 28);
  header.writeUInt32BE(0x63825363, 236);
  const arch = spec.arch;
  const family = spec.vendorClass ?? 'PXEClient';
  const vendorClass =
    (family === 'PXEClient' || family === 'HTTPClient') && !spec.bareVendorClass ? `${family}:Arch:${String(arch ?? 0).padStart(5, '0')}:UNDI:003016` : family;
  const options: number[] = [53, 1, spec.messageType, 57, 2, 0x04, 0xec, 55, 7, 1, 3, 43, 60, 66, 67, 128];
  if (spec.uuid) options.push(97, 17, 0, ...Buffer.from(spec.uuid.replaceAll('-', ''), 'hex'));
  if (arch !== undefined) options.push(93, 2, arch >> 8, arch & 0xff);
  options.push(94, 3, 1, 3, 16);
  options.push(60, vendorClass.length, ...Buffer.from(vendorClass, 'latin1'));
  if (spec.ipxe) options.push(77, 4, ...Buffer.from('iPXE'));
  for (const [code, bytes] of spec.extra ?? []) options.push(code, bytes.length, ...bytes);
  options.push(255);
  return Buffer.concat([header, Buffer.from(options)]);
}
