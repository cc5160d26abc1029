// boot.pxeBoot: metal.ensureRamdisk's network boot in one command instead of four. It writes
// the boot entries (none for a discovery boot), then through one BMC session powers the
// machine off, sets a one-time PXE boot and powers it on. Each BMC command keeps the operation
// id it has as a command of its own (<workflow>/<step key>/<command>), so a retried or re-routed
// boot reuses what an earlier attempt or another agent already sent, command by command.
// Off and on rather than a cycle (as Ironic reboots): each is safe to send again.
import { pxeBootSchema } from '../../../core/boot/boot-entry';
import { parseWith } from '../../../core/errors';
import { withBmc } from '../bmc-access';
import { writeBootEntries } from './boot';
import { setBootDevice } from './boot-device';
import type { SiteStep, SiteStepDeps } from './deps';
import { setPower } from './power';

export function pxeBootStep(deps: SiteStepDeps): SiteStep {
  return async (input) => {
    const { entries } = parseWith(pxeBootSchema, input.with);
    const written = entries.length > 0 ? writeBootEntries(deps, input, entries) : { macs: [], notAfter: null };
    return withBmc(deps, input, async (driver) => {
      const off = await setPower(deps, input, driver, 'off');
      const boot = await setBootDevice(deps, input, driver, { device: 'pxe', persistent: false });
      const on = await setPower(deps, input, driver, 'on');
      return { ...written, off, boot, on };
    });
  };
}
