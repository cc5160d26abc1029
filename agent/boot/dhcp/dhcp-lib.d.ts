// Types for the two modules of the `dhcp` package we use (it ships none): its packet
// writer (lib/protocol.js format) and its option table (lib/options.js addOption).
declare module 'dhcp/lib/protocol.js' {
  /** A value for one option, as the option table's type for that code expects it. */
  export type DhcpLibOptionValue = number | string | number[] | string[];

  export interface DhcpLibPacket {
    op: number;
    htype: number;
    hlen: number;
    hops: number;
    xid: number;
    secs: number;
    flags: number;
    ciaddr: string;
    yiaddr: string;
    siaddr: string;
    giaddr: string;
    /** aa:bb:cc:dd:ee:ff or AA-BB-…. */
    chaddr: string;
    sname: string;
    file: string;
    options: Record<number, DhcpLibOptionValue>;
  }

  /** The writer: a 1,500-byte buffer and how much of it was written. */
  export interface DhcpLibSeqBuffer {
    _data: Buffer;
    _w: number;
  }

  const protocol: { format(packet: DhcpLibPacket): DhcpLibSeqBuffer };
  export default protocol;
}

declare module 'dhcp/lib/options.js' {
  export type DhcpLibOptionType = 'UInt8' | 'UInt16' | 'UInt32' | 'IP' | 'IPs' | 'ASCII' | 'UTF8' | 'UInt8s' | 'UInt16s' | 'Bool';
  const options: {
    opts: Record<number, { name: string; type?: DhcpLibOptionType }>;
    addOption(code: number, option: { name: string; type: DhcpLibOptionType; attr?: string }): void;
  };
  export default options;
}
