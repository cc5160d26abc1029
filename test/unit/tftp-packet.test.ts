// TFTP packets and the listener's decisions (agent/boot/tftp/packet.ts, handler.ts): what is
// a well-formed request, which options are negotiated, and when the server stays silent or
// refuses with an ERROR.
import { describe, expect, it } from 'vitest';
import { decideRequest, defaultTftpLimits, type RequestContext } from '../../agent/boot/tftp/handler';
import { encodeError, encodeOack, parseClientReply, parseRequest, TftpError } from '../../agent/boot/tftp/packet';
import { ackPacket, requestPacket } from '../helpers/tftp';

const idle: RequestContext = { active: true, transfers: 0, transfersFromSource: 0, duplicate: false };

describe('TFTP request parsing', () => {
  it('reads an octet RRQ with blksize and tsize, mode and option names in any case', () => {
    expect(parseRequest(requestPacket(1, 'undionly.kpxe', 'OCTET', { BlkSize: '1468', tsize: '0' }))).toEqual({
      kind: 'read',
      filename: 'undionly.kpxe',
      mode: 'octet',
      options: { blksize: 1468, tsize: true },
    });
    expect(parseRequest(requestPacket(2, 'x', 'netascii'))).toEqual({ kind: 'write', filename: 'x', mode: 'netascii', options: {} });
  });

  it('ignores options it does not negotiate and option values out of range', () => {
    for (const blksize of ['7', '65465', 'abc', '1e3', '-1', '1468.0']) {
      expect(parseRequest(requestPacket(1, 'a', 'octet', { blksize, timeout: '5', windowsize: '4' }))?.options).toEqual({});
    }
    expect(parseRequest(requestPacket(1, 'a', 'octet', { blksize: '8' }))?.options).toEqual({ blksize: 8 });
    expect(parseRequest(requestPacket(1, 'a', 'octet', { blksize: '65464', tsize: 'x' }))?.options).toEqual({ blksize: 65464 });
  });

  it('takes nothing that is not exactly a request', () => {
    const valid = requestPacket(1, 'a.efi', 'octet');
    expect(parseRequest(valid)).not.toBeNull();
    expect(parseRequest(valid.subarray(0, valid.length - 1))).toBeNull(); // unterminated mode
    expect(parseRequest(Buffer.concat([valid, Buffer.from('blksize\0')]))).toBeNull(); // option without a value
    expect(parseRequest(requestPacket(1, 'a b', 'octet'))).toBeNull(); // a space
    expect(parseRequest(requestPacket(1, 'caf\xe9', 'octet'))).toBeNull(); // beyond ASCII
    expect(parseRequest(requestPacket(1, '', 'octet'))).toBeNull();
    expect(parseRequest(requestPacket(1, 'a', 'binary'))).toBeNull();
    expect(parseRequest(requestPacket(1, 'a'.repeat(256), 'octet'))).toBeNull();
    expect(parseRequest(requestPacket(1, 'a', 'octet', { ['k'.repeat(33)]: '1' }))).toBeNull();
    expect(parseRequest(requestPacket(1, 'a', 'octet', { blksize: '512', BLKSIZE: '1024' }))).toBeNull();
    expect(parseRequest(Buffer.concat([valid, Buffer.alloc(600 - valid.length, 0x41), Buffer.from([0, 0x41, 0])]))).toBeNull(); // > 512 bytes
    expect(parseRequest(ackPacket(1))).toBeNull();
    expect(parseRequest(Buffer.alloc(0))).toBeNull();
  });
});

describe('TFTP client replies during a transfer', () => {
  it('are an ACK of exactly 4 bytes or an ERROR; anything else is nothing', () => {
    expect(parseClientReply(ackPacket(65535))).toEqual({ kind: 'ack', block: 65535 });
    expect(parseClientReply(Buffer.concat([ackPacket(1), Buffer.from([0])]))).toBeNull();
    expect(parseClientReply(encodeError(TftpError.OPTION_REFUSED, 'no'))).toEqual({ kind: 'error', code: 8 });
    expect(parseClientReply(Buffer.from([0, 3, 0, 1, 9, 9]))).toBeNull(); // DATA
    expect(parseClientReply(Buffer.from([0, 4, 0]))).toBeNull();
    expect(parseClientReply(requestPacket(1, 'a', 'octet'))).toBeNull();
  });
});

describe('TFTP encoding', () => {
  it('writes OACK and ERROR as RFC 2347 and RFC 1350 lay them out', () => {
    expect(encodeOack({ blksize: 1468, tsize: 74213 })).toEqual(Buffer.from('\0\x06blksize\x001468\0tsize\x0074213\0', 'latin1'));
    expect(encodeError(TftpError.FILE_NOT_FOUND, 'file not found')).toEqual(Buffer.from('\0\x05\0\x01file not found\0', 'latin1'));
  });
});

describe('TFTP request decisions', () => {
  const rrq = requestPacket(1, 'undionly.kpxe', 'octet', { blksize: '1468', tsize: '0' });

  it('reads an octet RRQ, agreeing to at most our largest block size', () => {
    expect(decideRequest(rrq, idle, defaultTftpLimits)).toEqual({
      action: 'read',
      filename: 'undionly.kpxe',
      blockSize: 1468,
      negotiate: { blksize: 1468, tsize: true },
    });
    expect(decideRequest(rrq, idle, { ...defaultTftpLimits, maxBlockSize: 1024 })).toMatchObject({ blockSize: 1024, negotiate: { blksize: 1024 } });
    expect(decideRequest(requestPacket(1, 'snponly.efi', 'octet'), idle, defaultTftpLimits)).toEqual({
      action: 'read',
      filename: 'snponly.efi',
      blockSize: 512,
      negotiate: { tsize: false },
    });
  });

  it('stays silent while not active, for garbage, for a resent request and beyond either cap', () => {
    expect(decideRequest(rrq, { ...idle, active: false }, defaultTftpLimits)).toEqual({ action: 'drop', why: 'not-active' });
    expect(decideRequest(Buffer.from('garbage'), idle, defaultTftpLimits)).toEqual({ action: 'drop', why: 'malformed' });
    expect(decideRequest(rrq, { ...idle, duplicate: true }, defaultTftpLimits)).toEqual({ action: 'drop', why: 'duplicate' });
    expect(decideRequest(rrq, { ...idle, transfers: 64 }, defaultTftpLimits)).toEqual({ action: 'drop', why: 'over-cap' });
    expect(decideRequest(rrq, { ...idle, transfers: 63, transfersFromSource: 4 }, defaultTftpLimits)).toEqual({ action: 'drop', why: 'over-cap' });
    expect(decideRequest(requestPacket(2, 'x', 'octet'), { ...idle, transfers: 64 }, defaultTftpLimits)).toEqual({ action: 'drop', why: 'over-cap' });
  });

  it('refuses writes, other modes and names outside the root with an ERROR', () => {
    expect(decideRequest(requestPacket(2, 'x', 'octet'), idle, defaultTftpLimits)).toMatchObject({ action: 'refuse', code: TftpError.ACCESS_VIOLATION });
    expect(decideRequest(requestPacket(1, 'undionly.kpxe', 'netascii'), idle, defaultTftpLimits)).toMatchObject({
      action: 'refuse',
      code: TftpError.ILLEGAL_OPERATION,
    });
    expect(decideRequest(requestPacket(1, 'undionly.kpxe', 'mail'), idle, defaultTftpLimits)).toMatchObject({
      action: 'refuse',
      code: TftpError.ILLEGAL_OPERATION,
    });
    for (const name of ['../etc/passwd', '/etc/passwd', 'a/../../b', '..', '.hidden', 'dir/file', 'a\\b', 'x..y']) {
      expect(decideRequest(requestPacket(1, name, 'octet'), idle, defaultTftpLimits), name).toMatchObject({
        action: 'refuse',
        code: TftpError.ACCESS_VIOLATION,
      });
    }
  });
});
