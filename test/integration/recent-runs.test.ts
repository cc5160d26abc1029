// A site agent's step asks several times a second whether its run runs
// (services/temporal/recent-runs.ts), against the real Temporal server: an answer is about the
// run named, never another run under the same workflow id; "it runs" is reused for
// RECENTLY_RUNNING_MS and no longer; "it does not run" is never kept. No worker runs: a started
// workflow stays running.
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { RECENTLY_RUNNING_MS, recentlyRunning, runningNow } from '../../services/temporal/recent-runs';

let connection: Connection;
let client: Client;
const taskQueue = `recent-runs-${randomBytes(4).toString('hex')}`;
const newWorkflowId = () => `recent-runs-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
});
afterAll(async () => connection?.close());

const start = (workflowId: string) => client.workflow.start('noWorkerRunsThis', { workflowId, taskQueue });

it("answers about the run named only, and reuses that run's running answer for RECENTLY_RUNNING_MS", async () => {
  const workflowId = newWorkflowId();
  const first = await start(workflowId);
  expect(await recentlyRunning(client, workflowId, first.firstExecutionRunId)).toMatchObject({ runId: first.firstExecutionRunId });
  expect(await recentlyRunning(client, workflowId, 'another-run')).toBeNull();

  // The run ends and a new one starts under the same id.
  await first.terminate('ended for the test');
  const second = await start(workflowId);
  expect(await runningNow(client, workflowId)).toMatchObject({ runId: second.firstExecutionRunId });
  expect(await recentlyRunning(client, workflowId, second.firstExecutionRunId)).toMatchObject({ runId: second.firstExecutionRunId });
  // Within the window the ended run's answer stands; after it, Temporal is asked again.
  expect(await recentlyRunning(client, workflowId, first.firstExecutionRunId)).toMatchObject({ runId: first.firstExecutionRunId });
  await new Promise((resolve) => setTimeout(resolve, RECENTLY_RUNNING_MS + 100));
  expect(await recentlyRunning(client, workflowId, first.firstExecutionRunId)).toBeNull();
  await second.terminate('test done');
});

it('never keeps an answer that a run does not run', async () => {
  const workflowId = newWorkflowId();
  const handle = await start(workflowId);
  await handle.terminate('ended for the test');
  expect(await recentlyRunning(client, workflowId, handle.firstExecutionRunId)).toBeNull();
  const again = await start(workflowId);
  expect(await recentlyRunning(client, workflowId, again.firstExecutionRunId)).toMatchObject({ runId: again.firstExecutionRunId });
  await again.terminate('test done');
});
