// The ramdisk image's program (bundled into one file by scripts/build-ramdisk.ts and run by
// its init): the ramdisk agent on this machine. A failure is printed for the serial console
// and exits non-zero, so init can say so and power the machine off.
import { runRamdiskOnMachine } from './machine-main';

runRamdiskOnMachine().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`ironflow ramdisk: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
