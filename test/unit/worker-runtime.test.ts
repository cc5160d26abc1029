// One Temporal runtime per process: an agent that asks for a metrics exporter after the
// process's runtime was installed without one is told so (and how to fix it), never
// silently left with no exporter.
import { describe, expect, it } from 'vitest';
import { installWorkerRuntime } from '../../worker/runtime';

describe('installWorkerRuntime', () => {
  it('installs once; a later call asking for a metrics exporter the runtime lacks is refused, naming the setting', () => {
    installWorkerRuntime();
    expect(() => installWorkerRuntime()).not.toThrow();
    expect(() => installWorkerRuntime({ metricsAddress: '127.0.0.1:9467', metricsSetting: '[metrics] temporal_sdk_address' })).toThrow(
      "this process's Temporal runtime is already installed with no metrics exporter, so [metrics] temporal_sdk_address (127.0.0.1:9467) cannot take effect: run the agent in a process of its own, or drop the setting",
    );
  });
});
