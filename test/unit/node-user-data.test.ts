// What the installed OS's agent reads from the config drive's user data (agent/node/user-data.ts):
// its join's --server, --node-id and token file. A document without them, of any shape (an
// empty one parses to null), is refused with INVALID_INPUT naming what is missing, never a
// TypeError.
import { describe, expect, it } from 'vitest';
import { joinArgsFromUserData, joinTokenFromUserData } from '../../agent/node/user-data';
import { JOIN_TOKEN_FILE } from '../../core/userdata/agent-argv';

const join = ['ironflow', 'agent', 'join', '--server', 'https://api.example:8443', '--node-id', 'node_a'];

describe("the installed OS's user data", () => {
  it('reads the join and its token from cloud-init and from Ignition', () => {
    const cloudInit = `#cloud-config\nwrite_files:\n  - path: ${JOIN_TOKEN_FILE}\n    content: "ifjt_x.y"\nruncmd:\n  - ${JSON.stringify(join)}\n`;
    expect(joinArgsFromUserData('cloud-init', cloudInit)).toEqual({ server: 'https://api.example:8443', nodeId: 'node_a' });
    expect(joinTokenFromUserData('cloud-init', cloudInit)).toBe('ifjt_x.y');
    const ignition = JSON.stringify({
      storage: { files: [{ path: JOIN_TOKEN_FILE, contents: { source: 'data:,ifjt_x.y' } }] },
      systemd: { units: [{ name: 'ironflow-join.service', contents: `[Service]\nExecStart=${join.join(' ')}` }] },
    });
    expect(joinArgsFromUserData('ignition', ignition)).toEqual({ server: 'https://api.example:8443', nodeId: 'node_a' });
    expect(joinTokenFromUserData('ignition', ignition)).toBe('ifjt_x.y');
  });

  it('refuses a document without them, whatever its shape, naming what is missing', () => {
    for (const document of ['#cloud-config\n', '', 'runcmd: echo', 'write_files: [null, 3]\nruncmd: [null]']) {
      expect(() => joinArgsFromUserData('cloud-init', document), document).toThrow('the cloud-init user data runs no agent join --server URL --node-id ID');
      expect(() => joinTokenFromUserData('cloud-init', document), document).toThrow(`the cloud-init user data writes no ${JOIN_TOKEN_FILE}`);
    }
    for (const document of ['null', '{}', '{"systemd":{"units":"x"},"storage":{"files":[null]}}', '{"systemd":{"units":[null,{"contents":3}]}}']) {
      expect(() => joinArgsFromUserData('ignition', document), document).toThrow('the ignition user data runs no agent join');
      expect(() => joinTokenFromUserData('ignition', document), document).toThrow(`the ignition user data writes no ${JOIN_TOKEN_FILE}`);
    }
  });
});
