// The config drive a deploy leaves for the installed OS (Ironic's approach): a small volume
// on the target disk that the OS's first boot reads. cloud-init user data goes on a NoCloud
// volume labelled `cidata` (user-data, meta-data); Ignition on an OpenStack config drive
// labelled `config-2` (openstack/latest/user_data), which is where Ignition's OpenStack
// provider looks. The ramdisk writes it; an OS image without cloud-init or Ignition (ours,
// `npm run build:os-image`) reads it with readConfigDrive.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type UserDataKind = 'cloud-init' | 'ignition';

interface ConfigDriveLayout {
  /** The filesystem label the OS finds the volume by. */
  label: 'cidata' | 'config-2';
  files: Array<{ path: string; content: string }>;
}

const NOCLOUD_USER_DATA = 'user-data';
const CONFIG2_USER_DATA = 'openstack/latest/user_data';
/** Config drives are tiny: a document larger than this is not ours. */
const MAX_USER_DATA_BYTES = 1024 * 1024;

/** One instance per deploy (each document holds a fresh token), so cloud-init runs its first boot again. */
const instanceId = (document: string) => `ironflow-${createHash('sha256').update(document).digest('hex').slice(0, 16)}`;

export function configDriveLayout(userData: { kind: UserDataKind; document: string }): ConfigDriveLayout {
  if (userData.kind === 'cloud-init') {
    return {
      label: 'cidata',
      files: [
        { path: NOCLOUD_USER_DATA, content: userData.document },
        { path: 'meta-data', content: `instance-id: ${instanceId(userData.document)}\n` },
      ],
    };
  }
  return {
    label: 'config-2',
    files: [
      { path: CONFIG2_USER_DATA, content: userData.document },
      { path: 'openstack/latest/meta_data.json', content: `${JSON.stringify({ uuid: instanceId(userData.document) })}\n` },
    ],
  };
}

/** The user data on a mounted config drive, or undefined when it holds none. */
export function readConfigDrive(mountPoint: string): { kind: UserDataKind; document: string } | undefined {
  for (const [file, kind] of [
    [NOCLOUD_USER_DATA, 'cloud-init'],
    [CONFIG2_USER_DATA, 'ignition'],
  ] as const) {
    const full = path.join(mountPoint, file);
    if (!existsSync(full)) continue;
    const document = readFileSync(full, 'utf8');
    if (Buffer.byteLength(document) > MAX_USER_DATA_BYTES) throw new Error(`${full} is larger than ${MAX_USER_DATA_BYTES} bytes: not a config drive of ours`);
    return { kind, document };
  }
  return undefined;
}
