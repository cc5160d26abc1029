import { defineConfig } from 'vitest/config';

/**
 * Tests that boot QEMU machines (TCG: a core each), and the flaky-BMC run (minutes of 5 s
 * BMC answers). They run after the rest of the suite, one file at a time, so they never starve
 * the timing-sensitive tests (crash resumption, leases) of the machine's two cores.
 */
const vmTests = ['test/e2e/boot-real-firmware.test.ts', 'test/e2e/qemu-*.test.ts', 'test/e2e/flaky-bmcs.test.ts'];

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
    env: { IRONFLOW_METRICS_SDK_ADDRESS: 'off', IRONFLOW_API_CHECK_RESPONSES: 'true' },
    projects: [
      // Two cores: two files at a time.
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: vmTests, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'vm', include: vmTests, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
