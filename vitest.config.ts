import { defineConfig } from 'vitest/config';

/**
 * Tests that boot QEMU machines (TCG: a core each), and the flaky-BMC run (minutes of 5 s
 * BMC answers). They run after the rest of the suite, so they never starve the
 * timing-sensitive tests (crash resumption, leases) of the machine's two cores. The QEMU
 * lifecycle and the flaky-BMC run go side by side: the first keeps the cores busy (two machines
 * at once), the second mostly waits on its BMCs. The real-firmware boots (two machines at once,
 * their boot times printed) go last, alone.
 */
const vmSideBySide = ['test/e2e/qemu-lifecycle.test.ts', 'test/e2e/flaky-bmcs.test.ts'];
const vmAlone = ['test/e2e/boot-real-firmware.test.ts'];
/**
 * The suite shares each worker process between its files (isolate: false): a file's imports
 * (the Temporal SDK, Prisma, Fastify) are loaded once per worker, not once per file: 46 s of
 * import in a pass instead of 243 s (a whole CI run: 39 minutes instead of 47). A file that
 * needs a process of its own runs apart: the SDK's metrics exporter can only be installed with
 * the process's Temporal runtime, before any other.
 */
const ownProcess = ['test/integration/metrics.test.ts'];

export default defineConfig({
  test: {
    // One Temporal dev server for the run; each test file gets its own database, task
    // queue and data dir.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Test files run side by side, and so do the worker processes some spawn: a fixed SDK
    // metrics port would be taken (test/integration/metrics.test.ts picks a free one).
    // Every answer is checked by its zod schema as well as serialized (api/response-serializer.ts).
    env: { IRONFLOW_METRICS_SDK_ADDRESS: 'off', IRONFLOW_METRICS_WORKER_ADDRESS: 'off', IRONFLOW_API_CHECK_RESPONSES: 'true' },
    projects: [
      // Two cores: two files at a time.
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...vmSideBySide, ...vmAlone, ...ownProcess],
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      // Beside the suite, in its group: vitest wants one maxWorkers per group.
      { extends: true, test: { name: 'own-process', include: ownProcess, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'vm', include: vmSideBySide, maxWorkers: 2, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'vm-alone', include: vmAlone, maxWorkers: 1, sequence: { groupOrder: 2 } } },
    ],
  },
});
