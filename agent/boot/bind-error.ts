// A boot server port that cannot be bound stops the agent's start with an error that names
// the port and what to do about it (proxy DHCP on 67/4011 and TFTP on 69 are privileged).
import { IronflowError } from '../../core/errors';

export function udpBindError(
  error: NodeJS.ErrnoException,
  where: { service: string; port: number; address: string; configKey: 'proxy_dhcp' | 'tftp' },
): IronflowError {
  const what = `${where.service} cannot listen on UDP port ${where.port} (${where.address})`;
  const off = `or set ${where.configKey} = false in [boot]`;
  const details = { path: `boot.${where.configKey}`, port: where.port, code: error.code };
  if (error.code === 'EADDRINUSE') {
    return new IronflowError(
      'INVALID_CONFIG',
      `${what}: the port is in use by another process (a DHCP or TFTP server such as dnsmasq, isc-dhcp-server or tftpd-hpa on this host); stop it, ${off}`,
      details,
    );
  }
  if (error.code === 'EACCES' || error.code === 'EPERM') {
    return new IronflowError(
      'INVALID_CONFIG',
      `${what}: permission denied; run the agent as root or give it CAP_NET_BIND_SERVICE (setcap cap_net_bind_service=+ep "$(command -v node)"), ${off}`,
      details,
    );
  }
  if (error.code === 'EADDRNOTAVAIL') {
    return new IronflowError(
      'INVALID_CONFIG',
      `${what}: ${where.address} is not an address of this host; set boot.server_ip to this agent's address on the provisioning network, ${off}`,
      { ...details, path: 'boot.server_ip' },
    );
  }
  return new IronflowError('INVALID_CONFIG', `${what}: ${error.message}; ${off}`, details);
}
