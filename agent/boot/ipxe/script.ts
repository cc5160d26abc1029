// The iPXE scripts the boot server answers. Values that reach a script are checked
// (base64url, URLs without spaces) so a boot entry can never inject a script line.
interface RamdiskBoot {
  kernel: string;
  initrd: string;
  /** `if.*` kernel parameters, in order. */
  params: Array<[string, string]>;
  cmdline: string;
}

const safeValue = /^[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]+$/;

function checked(name: string, value: string): string {
  if (!safeValue.test(value)) throw new RangeError(`${name} holds characters an iPXE script line cannot carry`);
  return value;
}

export const IPXE_PARAM_PREFIX = 'if.';

export function ramdiskScript(boot: RamdiskBoot): string {
  const params = boot.params.map(([name, value]) => `${IPXE_PARAM_PREFIX}${name}=${checked(name, value)}`).join(' ');
  const initrdName = checked('initrd', boot.initrd).split('/').pop() || 'initrd';
  return [
    '#!ipxe',
    `kernel ${checked('kernel', boot.kernel)} initrd=${initrdName} ${params}${boot.cmdline ? ` ${boot.cmdline}` : ''}`,
    `initrd ${boot.initrd}`,
    'boot',
    '',
  ].join('\n');
}

/** iPXE's own first script: chains to /boot/ipxe with what it knows of the machine. */
export function chainScript(baseUrl: string): string {
  return ['#!ipxe', `chain ${checked('url', baseUrl)}/boot/ipxe?mac=\${net0/mac}&uuid=\${uuid}&ip=\${net0/ip} || exit`, ''].join('\n');
}

/** An unknown machine: exit, so the firmware falls through to its next boot device. */
export const unknownMachineScript = ['#!ipxe', 'echo this machine has no boot entry here', 'exit', ''].join('\n');

/** Not the active boot server (fenced, standby): wait, then reboot and ask again. */
export const notActiveScript = ['#!ipxe', 'echo this boot server is not active', 'sleep 10', 'reboot', ''].join('\n');

/** A cached ISO over HTTP range requests, booted as it is (no token, no if.* parameters). */
export function sanbootScript(url: string): string {
  return ['#!ipxe', `sanboot --no-describe ${checked('url', url)}`, ''].join('\n');
}

/** A sanboot entry whose ISO is not cached and verified yet: wait and ask again (never the ramdisk). */
export function imageNotReadyScript(url: string, seconds: number): string {
  return ['#!ipxe', "echo this machine's ISO is not in the site cache yet", `sleep ${seconds}`, `chain ${checked('url', url)}`, ''].join('\n');
}

/** The discovery token is not there yet: wait and ask again. */
export function retryScript(url: string, seconds: number): string {
  return ['#!ipxe', "echo waiting for this machine's discovery token", `sleep ${seconds}`, `chain ${checked('url', url)}`, ''].join('\n');
}

/** Parses a ramdisk script the way iPXE reads it: the kernel line's URL and arguments. */
export function parseRamdiskScript(script: string): { kernel: string; initrd: string | undefined; args: string[]; params: Record<string, string> } | undefined {
  const lines = script.split('\n').map((l) => l.trim());
  if (lines[0] !== '#!ipxe') return undefined;
  const kernelLine = lines.find((l) => l.startsWith('kernel '));
  if (!kernelLine) return undefined;
  const [, kernel, ...args] = kernelLine.split(/\s+/);
  const initrd = lines.find((l) => l.startsWith('initrd '))?.split(/\s+/)[1];
  const params: Record<string, string> = {};
  for (const arg of args) {
    if (!arg.startsWith(IPXE_PARAM_PREFIX)) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) params[arg.slice(IPXE_PARAM_PREFIX.length, eq)] = arg.slice(eq + 1);
  }
  return { kernel: kernel as string, initrd, args, params };
}
