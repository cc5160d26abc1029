// Workflow code must replay the histories it already wrote: a running workflow resumes on a new
// worker by replaying its history, and a change to the commands the code sends (their kind or
// order) fails that replay with a nondeterminism error. These are provision runs of several shapes,
// node lifecycles (a node's lifecycle runs for as long as the node: every release of the code meets
// running ones) and a machine's runs through the real agents, recorded with the code of their day
// (test/fixtures/record-workflow-histories.ts), replayed on the workflow bundle as it is now.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { temporal } from '../../services/temporal-proto';
import { workflowMetricsSinks } from '../../worker/workflow-metrics-sink';

const fixtures = fileURLToPath(new URL('../fixtures/workflow-histories/', import.meta.url));
const files = readdirSync(fixtures).filter((file) => file.endsWith('.json'));

const { History } = temporal.api.history.v1;
type RecordedHistory = ReturnType<typeof History.decode>;

/** A fixture's history: the proto, base64 (test/fixtures/record-workflow-histories.ts). */
const recorded = (file: string): RecordedHistory =>
  History.decode(Buffer.from((JSON.parse(readFileSync(`${fixtures}${file}`, 'utf8')) as { history: string }).history, 'base64'));

async function replay(history: RecordedHistory): Promise<void> {
  const workflowBundle = { code: readFileSync(inject('workflowBundle'), 'utf8') };
  await Worker.runReplayHistory({ workflowBundle, sinks: workflowMetricsSinks, replayName: 'workflow-replay-test' }, history);
}

describe('recorded workflow histories', () => {
  it('are there to replay', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'lifecycle-aborted.json',
        'lifecycle-aborted-2026-12-02.json',
        'lifecycle-enroll-failed.json',
        'lifecycle-enroll-failed-2026-12-02.json',
        'provision-aborted.json',
        'provision-boot-slot.json',
        'provision-boot-slot-2026-12-02.json',
        'provision-failing.json',
        'provision-mixed.json',
        'provision-plain.json',
        'provision-site-step.json',
        'provision-site-step-2026-12-03.json',
        // Runs with a patch level (workflows/patches.ts): no patch markers.
        'lifecycle-aborted-2026-12-03.json',
        'provision-plain-2026-12-03.json',
        'provision-site-step-2026-12-03-2.json',
        // A machine's whole cycle on the real agents: each boot one boot.pxeBoot (patch site-pxe-boot).
        'metal-cycle-lifecycle-ready.json',
        'metal-cycle-enrolling.json',
        'metal-cycle-inspecting.json',
        'metal-cycle-commissioning.json',
        'metal-cycle-lifecycle-deployed.json',
        'metal-cycle-deploying.json',
        'metal-cycle-lifecycle-released.json',
        'metal-cycle-releasing.json',
        // Lifecycles that waited for each state run's close (patch lifecycle-waits-child-close).
        // They replay on code with or without the wait (a local activity's marker is matched in a
        // later task): the e2e and integration lifecycles are what fail without it.
        'metal-cycle-lifecycle-ready-2026-12-07.json',
        'metal-cycle-lifecycle-deployed-2026-12-07.json',
        'metal-cycle-lifecycle-released-2026-12-07.json',
        // Lifecycles that heard each state run's end from its close, and state runs that sent none (patch state-end-on-request).
        'metal-cycle-lifecycle-ready-2026-12-07-2.json',
        'metal-cycle-lifecycle-deployed-2026-12-07-2.json',
        'metal-cycle-lifecycle-released-2026-12-07-2.json',
        'metal-cycle-enrolling-2026-12-07.json',
        'metal-cycle-inspecting-2026-12-07.json',
        'metal-cycle-commissioning-2026-12-07.json',
        'metal-cycle-deploying-2026-12-07.json',
        'metal-cycle-releasing-2026-12-07.json',
      ]),
    );
  });

  it.each(files)('%s replays on the current workflow code', async (file) => {
    await replay(recorded(file));
  });

  it('a history whose commands the code no longer sends fails to replay', async () => {
    // The plain run with its second activity renamed in the history: the code schedules
    // event.append where the history says another activity was scheduled.
    const history = recorded('provision-plain.json');
    const scheduled = (history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes);
    const second = scheduled[1]?.activityTaskScheduledEventAttributes?.activityType;
    expect(second?.name).toBe('event.append');
    if (second) second.name = 'event.appendElsewhere';
    await expect(replay(history)).rejects.toThrow(/[Nn]ondeterminism|DeterminismViolation/);
  });

  it('the real agents’ inspection replays through the code that booted it: its boot.pxeBoot renamed, it fails', async () => {
    const history = recorded('metal-cycle-inspecting.json');
    const boot = (history.events ?? []).find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'boot.pxeBoot');
    expect(boot).toBeDefined();
    const type = boot?.activityTaskScheduledEventAttributes?.activityType;
    if (type) type.name = 'boot.pxeBootElsewhere';
    await expect(replay(history)).rejects.toThrow(/[Nn]ondeterminism|DeterminismViolation/);
  });
});
