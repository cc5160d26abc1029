// The OS image's program (`npm run build:os-image` bundles it; the image's init runs it with
// the config drive mounted at its first argument and the agent's data dir at its second):
// the installed OS's first boot and node agent, with this machine's facts from sysfs.
import { readConfigDrive } from '../common/config-drive';
import { runUntilSignal } from '../common/run-until-signal';
import { startInstalledOsAgent } from './first-boot';

async function main(): Promise<void> {
  const [configDrive, dataDir] = process.argv.slice(2);
  if (!configDrive || !dataDir) throw new Error('usage: os-agent <config drive mount point> <data dir>');
  const userData = readConfigDrive(configDrive);
  if (!userData) throw new Error(`no user data on the config drive at ${configDrive}: this OS was not deployed by Ironflow`);
  await runUntilSignal(await startInstalledOsAgent({ userData, dataDir }));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`ironflow os: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
