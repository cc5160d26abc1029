// The dev server's task queue partitions (stack/task-queue-partitions.ts) on real servers: the
// setting reaches the server (tasks land on partitions other than the root only when asked for
// more than one), and a store that ran with 4 partitions, started again with 1, still hands out
// the tasks its other partitions hold (without the record kept beside the store, 13 of 16 stay
// there). A partition shows in the store's task_queues rows once it takes a task: a child
// partition of queue q is the queue `/_sys/q/<n>` (Temporal's internal name).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import Database from 'better-sqlite3';
import { expect, inject, it } from 'vitest';
import { startTestTemporalServer } from '../helpers/temporal-server';

/** Workflow starts on `taskQueue` with no worker: each start's first task lands on a partition it picked and waits there. */
async function startUnpolled(address: string, taskQueue: string, count: number): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    for (let i = 0; i < count; i++) await client.workflow.start('noWorkerRunsThis', { workflowId: `${taskQueue}-${i}`, taskQueue });
  } finally {
    await connection.close();
  }
}

/** The child partitions of `taskQueue` the store holds rows for. */
function childPartitionRows(dbFile: string, taskQueue: string): number {
  const db = new Database(dbFile, { readonly: true });
  try {
    const row = db.prepare('SELECT count(*) AS n FROM task_queues WHERE instr(task_queue_id, ?) > 0').get(Buffer.from(`/_sys/${taskQueue}/`)) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

/** The workflows whose tasks were polled from `taskQueue` until `count` arrived or `withinMs` passed (a task not answered comes again after its timeout). */
async function pollWorkflowTasks(address: string, taskQueue: string, count: number, withinMs: number): Promise<number> {
  const connection = await Connection.connect({ address });
  const deadline = Date.now() + withinMs;
  const polled = new Set<string>();
  try {
    while (polled.size < count && Date.now() < deadline) {
      const task = await connection
        .withDeadline(Math.min(deadline, Date.now() + 5_000), () =>
          connection.workflowService.pollWorkflowTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, identity: 'partitions-test' }),
        )
        .catch(() => null); // a poll that found nothing before its deadline
      const workflowId = task?.workflowExecution?.workflowId;
      if (workflowId) polled.add(workflowId);
    }
    return polled.size;
  } finally {
    await connection.close();
  }
}

/**
 * The history service records which tasks it handed to matching every few minutes; a server
 * stopped before that hands them again at its next start, to whatever partitions it then has.
 * A store that ran for a while has recorded them, so the test records them at once.
 */
const ACK_AT_ONCE = {
  'history.transferProcessorUpdateAckInterval': '500ms',
  'history.shardUpdateMinInterval': '500ms',
  'history.shardFirstUpdateInterval': '500ms',
  'history.shardUpdateMinTasksCompleted': 1,
};

const queue = (label: string) => `partitions-${label}-${randomBytes(4).toString('hex')}`;

it('puts tasks on partitions other than the root only when asked for more than one', async () => {
  const dir = inject('runDir');
  for (const [partitions, expectChildren] of [
    [1, false],
    [4, true],
  ] as const) {
    const dbFile = path.join(dir, `temporal-partitions-${partitions}-${randomBytes(4).toString('hex')}.db`);
    const temporal = await startTestTemporalServer(dir, { name: `temporal-partitions-${partitions}`, taskQueuePartitions: partitions, dbFile });
    try {
      const taskQueue = queue(String(partitions));
      // 16 starts all on the root partition out of 4 would be a chance of 1 in 4^16.
      await startUnpolled(temporal.address, taskQueue, 16);
      expect(childPartitionRows(dbFile, taskQueue) > 0).toBe(expectChildren);
    } finally {
      await temporal.server.stop();
    }
  }
}, 120_000);

it('still hands out the tasks of a store that ran with 4 partitions after a start with 1', async () => {
  const dir = inject('runDir');
  const dbFile = path.join(dir, `temporal-partitions-lowered-${randomBytes(4).toString('hex')}.db`);
  const taskQueue = queue('lowered');
  const before = await startTestTemporalServer(dir, { name: 'temporal-partitions-before', taskQueuePartitions: 4, dbFile, dynamicConfig: ACK_AT_ONCE });
  try {
    await startUnpolled(before.address, taskQueue, 16);
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // the acks of the tasks handed to matching reach the store
  } finally {
    await before.server.stop();
  }
  expect(childPartitionRows(dbFile, taskQueue)).toBeGreaterThan(0);

  const after = await startTestTemporalServer(dir, { name: 'temporal-partitions-after', taskQueuePartitions: 1, dbFile });
  try {
    expect(await pollWorkflowTasks(after.address, taskQueue, 16, 20_000)).toBe(16);
  } finally {
    await after.server.stop();
  }
}, 150_000);
