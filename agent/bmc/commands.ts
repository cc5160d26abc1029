// The BMC commands a site step sends, each under an operation id and run at most once
// through the ledger. Whether a command may be sent again after an unknown outcome is
// decided here, per command, not by the caller.
import type { BmcDriver, BootSetting, Inspection, PowerAction, PowerState } from './driver';
import { virtualMediaOf } from './driver';
import { runOperationOnce, type JsonValue, type OperationLedger, type OperationOutcome } from './operations';

type BmcCommand =
  | { kind: 'power.get' }
  | { kind: 'power.set'; action: PowerAction }
  | { kind: 'boot.set'; setting: BootSetting }
  | { kind: 'inspect' }
  | { kind: 'media.insert'; url: string }
  | { kind: 'media.eject' };

type BmcCommandResult = { power: PowerState } | { inspection: Inspection } | { done: true };

/** A cycle or reset sent twice reboots the machine twice; everything else converges. */
function isIdempotent(command: BmcCommand): boolean {
  return !(command.kind === 'power.set' && (command.action === 'cycle' || command.action === 'reset'));
}

function describe(command: BmcCommand): string {
  switch (command.kind) {
    case 'power.set':
      return `power.set(${command.action})`;
    case 'boot.set':
      return `boot.set(${command.setting.device},${command.setting.persistent ? 'persistent' : 'once'})`;
    case 'media.insert':
      return `media.insert(${command.url})`;
    default:
      return command.kind;
  }
}

async function send(driver: BmcDriver, command: BmcCommand): Promise<BmcCommandResult> {
  switch (command.kind) {
    case 'power.get':
      return { power: await driver.power.get() };
    case 'power.set':
      await driver.power.set(command.action);
      return { done: true };
    case 'boot.set':
      await driver.management.setBoot(command.setting);
      return { done: true };
    case 'inspect':
      return { inspection: await driver.inspect() };
    case 'media.insert':
      await virtualMediaOf(driver).insert(command.url);
      return { done: true };
    case 'media.eject':
      await virtualMediaOf(driver).eject();
      return { done: true };
  }
}

export function runBmcCommand(
  ledger: OperationLedger,
  driver: BmcDriver,
  operationId: string,
  command: BmcCommand,
): Promise<OperationOutcome<BmcCommandResult>> {
  return runOperationOnce(
    ledger,
    { operationId, kind: describe(command), bmc: driver.bmcId, idempotent: isIdempotent(command) },
    async () => (await send(driver, command)) as BmcCommandResult & JsonValue,
  );
}
