// A listener's address as the site agent's [metrics] and `agent node --metrics-address` take it:
// host:port, an IPv6 host in brackets; a port past 65535 is refused with the reason, not left to
// fail at the bind.
import { describe, expect, it } from 'vitest';
import { listenAddressSchema } from '../../core/schemas/common';

describe('listenAddressSchema', () => {
  it('takes host:port and a bracketed IPv6 host', () => {
    for (const address of ['127.0.0.1:9466', '0.0.0.0:0', 'metrics.lab:65535', '[::1]:9467']) expect(listenAddressSchema.parse(address)).toBe(address);
  });

  it('refuses a missing port, an unbracketed IPv6 host and a port past 65535, saying why', () => {
    expect(listenAddressSchema.safeParse('127.0.0.1').error?.issues[0]?.message).toBe('host:port such as 127.0.0.1:9466');
    expect(listenAddressSchema.safeParse('::1:9466').success).toBe(false);
    expect(listenAddressSchema.safeParse('127.0.0.1:65536').error?.issues[0]?.message).toBe('the port must be 0 to 65535');
  });
});
