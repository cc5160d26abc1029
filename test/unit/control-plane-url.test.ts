// The one rule every agent mode applies to its control plane URL (services/control-plane-url.ts):
// https anywhere, plain http only to a loopback address, refused with INVALID_CONFIG naming
// the setting and the fix, never quoting a URL's user info.
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, requireTlsOffLoopback } from '../../services/control-plane-url';

describe('plain http only on loopback', () => {
  it.each(['127.0.0.1', '127.255.0.9', 'localhost', 'LOCALHOST', '[::1]', '::1', '[::ffff:7f00:1]'])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each(['10.0.0.2', '128.0.0.1', '0.0.0.0', 'example.com', 'localhost.example.com', '[::2]', '[::ffff:a00:2]', '[fe80::1]'])('%s is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });

  it('accepts https anywhere and http to loopback (as WHATWG URLs normalise them)', () => {
    for (const url of [
      'https://ironflow.example.com',
      'https://10.0.0.2:8080/',
      'http://127.0.0.1:8080',
      'http://localhost:1',
      'http://[::1]:8080',
      'http://2130706433:8080',
    ]) {
      expect(() => requireTlsOffLoopback(url, 'control_plane_url', 'pin')).not.toThrow();
    }
  });

  it('refuses http off loopback naming the key and the fix, without the user info', () => {
    let error: unknown;
    try {
      requireTlsOffLoopback('http://admin:hunter2@10.78.0.2:8080/x', 'if.gateway', 'the pin hint');
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'INVALID_CONFIG', details: { path: 'if.gateway', reason: 'plain-http-off-loopback' } });
    const message = (error as Error).message;
    expect(message).toContain('if.gateway is plain http to 10.78.0.2:8080');
    expect(message).toContain('Use https://10.78.0.2:8080');
    expect(message).toContain('the pin hint');
    expect(message).not.toContain('hunter2');
  });

  it('refuses other schemes and non-URLs', () => {
    expect(() => requireTlsOffLoopback('ftp://127.0.0.1/', '--server', 'p')).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', details: { path: '--server' } }),
    );
    expect(() => requireTlsOffLoopback('not a url', '--server', 'p')).toThrow(/--server is not a URL/);
    expect(() => requireTlsOffLoopback('http://0x7f000001.example/', '--server', 'p')).toThrow(/not a loopback address/);
  });
});
