// The site agent's config loader and site.httpProxy's guard: what is refused, and why.
import { describe, expect, it } from 'vitest';
import { siteAgentConfigFrom } from '../../agent/site/config';
import { networkList, parseCidr } from '../../agent/site/networks';
import { checkProxyUrl, type ProxyPolicy } from '../../agent/site/proxy-guard';
import { operationIdFor } from '../../agent/site/operation-id';
import { bmcTargetOf } from '../../agent/site/bmc-access';
import { IronflowError } from '../../core/errors';

const policy: ProxyPolicy = {
  machineAddresses: ['198.51.100.7', 'fd00::7', '10.10.0.9'],
  bmcHosts: new Set(['198.51.100.200']),
  bmcNetworks: networkList([parseCidr('10.10.0.0/16')!]),
};

function reason(url: string): unknown {
  try {
    checkProxyUrl(url, policy);
    return 'allowed';
  } catch (error) {
    return (error as IronflowError).details.reason ?? (error as IronflowError).code;
  }
}

describe('site.httpProxy guard', () => {
  it('allows only the machine’s own addresses', () => {
    expect(reason('http://198.51.100.7:8080/metrics')).toBe('allowed');
    expect(reason('http://[fd00::7]/status')).toBe('allowed');
    expect(reason('http://198.51.100.8/')).toBe('not-the-machine');
  });
  it('refuses BMCs, BMC networks, redfish paths, names and other schemes', () => {
    expect(reason('https://198.51.100.200/')).toBe('bmc-host');
    expect(reason('http://10.10.0.9/')).toBe('bmc-network');
    expect(reason('http://198.51.100.7/redfish/v1')).toBe('redfish-path');
    expect(reason('http://198.51.100.7/a/%2e%2e/Redfish/v1/Systems')).toBe('redfish-path');
    expect(reason('http://198.51.100.7/x/%72edfish')).toBe('redfish-path');
    expect(reason('http://machine.local/')).toBe('not-an-ip');
    expect(reason('file:///etc/passwd')).toBe('scheme');
    expect(reason('http://u:p@198.51.100.7/')).toBe('credentials');
  });
});

describe('site agent config', () => {
  it('resolves paths against the file and names a bad key', () => {
    const config = siteAgentConfigFrom(
      {
        control_plane_url: 'https://cp:8080/',
        data_dir: 'data',
        site: { bmc_networks: ['10.0.0.0/8'] },
        boot: { proxy_dhcp: true },
        certificate: { renew_after: '30s' },
      },
      '/etc/ironflow',
    );
    expect(config).toMatchObject({ controlPlaneUrl: 'https://cp:8080', dataDir: '/etc/ironflow/data', boot: { proxy_dhcp: true }, renewAfterMs: 30_000 });
    expect(() => siteAgentConfigFrom({ control_plane_url: 'https://cp', data_dir: 'd', site: { bmc_networks: ['10.0.0.0/33'] } }, '/')).toThrow(
      /site\.bmc_networks\[0\]/,
    );
    expect(() => siteAgentConfigFrom({ control_plane_url: 'https://cp', data_dir: 'd', extra: 1 }, '/')).toThrow(IronflowError);
    // A CA file only makes sense for https (it would fail every request otherwise); a missing one names its key.
    expect(() => siteAgentConfigFrom({ control_plane_url: 'http://127.0.0.1:8080', control_plane_ca_file: 'ca.pem', data_dir: 'd' }, '/')).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', details: { path: 'control_plane_ca_file' } }),
    );
    expect(() => siteAgentConfigFrom({ control_plane_url: 'https://cp', control_plane_ca_file: 'missing-ca.pem', data_dir: 'd' }, '/nonexistent')).toThrow(
      /control_plane_ca_file \/nonexistent\/missing-ca\.pem cannot be read/,
    );
  });
});

describe('operation ids and BMC targets', () => {
  it('derive the same id for every attempt of a step, and split a Redfish system path', () => {
    const id = operationIdFor({ workflowId: 'node:node_x:deploying:1', stepKey: 'steps[2]' }, 'power.set.cycle');
    expect(id).toBe('node:node_x:deploying:1/steps.2./power.set.cycle');
    expect(bmcTargetOf({ driver: 'redfish', address: 'http://127.0.0.1:9000/redfish/v1/Systems/m1', caPem: null })).toEqual({
      driver: 'redfish',
      address: 'http://127.0.0.1:9000',
      systemId: 'm1',
    });
    expect(bmcTargetOf({ driver: 'ipmi', address: '10.0.0.5:623', caPem: null })).toEqual({ driver: 'ipmi', address: '10.0.0.5:623' });
  });
});
