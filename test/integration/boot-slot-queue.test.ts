// A site's boot slots on the real database (SQLite or PostgreSQL, as the pass runs): never more
// holders than the limit however the takes interleave, first come first served, a slot given
// back goes to the oldest queued run, and the reclaim frees only the slots of runs that ended
// (and grants what a raised limit frees).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTarget } from '../../core/database-target';
import { createDb, type Db } from '../../services/db';
import { enterBootQueue, leaveBootQueue } from '../../services/boot-slots/queue';
import { reclaimBootSlots, RECLAIM_AFTER_MS } from '../../services/boot-slots/reclaim';
import { newId } from '../../services/ids';
import { testConfig } from '../helpers/control-plane';

let db: Db;
beforeAll(async () => {
  db = await createDb(databaseTarget(await testConfig()));
});
afterAll(async () => db?.$disconnect());

const run = (siteId: string, n: number) => ({ workflowId: `node:${siteId}-${n}:commissioning:1`, siteId, nodeId: `${siteId}-${n}` });
const holders = async (siteId: string) =>
  (await db.bootSlot.findMany({ where: { siteId, slot: { not: null } }, orderBy: { slot: 'asc' } })).map((row) => row.workflowId);

describe("a site's boot slots", () => {
  it('twelve runs taking at once: exactly the limit hold a slot, the others are queued with their place', async () => {
    const siteId = newId('site');
    const places = await Promise.all(Array.from({ length: 12 }, (_, n) => enterBootQueue(db, run(siteId, n), 3)));
    expect(places.filter((p) => p.granted)).toHaveLength(3);
    expect((await holders(siteId)).length).toBe(3);
    // Each queued run is told how many are ahead of it: 0 to 8, each once.
    expect(
      places
        .filter((p) => !p.granted)
        .map((p) => p.ahead)
        .sort((a, b) => a - b),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    // Taking again keeps the place: a retried activity does not queue twice.
    const again = await enterBootQueue(db, run(siteId, 0), 3);
    expect(again.granted).toBe(places[0]?.granted);
    expect(await db.bootSlot.count({ where: { siteId } })).toBe(12);
  });

  it('a slot given back goes to the run queued first, and wakes it', async () => {
    const siteId = newId('site');
    for (let n = 0; n < 4; n++) {
      await enterBootQueue(db, run(siteId, n), 2);
      await new Promise((resolve) => setTimeout(resolve, 5)); // distinct queue times
    }
    expect(await holders(siteId)).toEqual([run(siteId, 0).workflowId, run(siteId, 1).workflowId]);
    const woken = await leaveBootQueue(db, run(siteId, 0), 2);
    expect(woken).toEqual([run(siteId, 2).workflowId]);
    expect((await holders(siteId)).sort()).toEqual([run(siteId, 1).workflowId, run(siteId, 2).workflowId].sort());
    // A queued run that leaves (cancelled while it waited) frees nothing and wakes no one.
    expect(await leaveBootQueue(db, run(siteId, 3), 2)).toEqual([]);
    expect(await leaveBootQueue(db, run(siteId, 3), 2)).toEqual([]);
    // The next one queued is granted at once.
    expect(await enterBootQueue(db, run(siteId, 4), 2)).toMatchObject({ granted: false, ahead: 0 });
    expect(await leaveBootQueue(db, run(siteId, 1), 2)).toEqual([run(siteId, 4).workflowId]);
  });

  it('a lower limit grants nothing until the holders are below it', async () => {
    const siteId = newId('site');
    for (let n = 0; n < 3; n++) await enterBootQueue(db, run(siteId, n), 3);
    expect(await enterBootQueue(db, run(siteId, 3), 1)).toMatchObject({ granted: false, ahead: 0 });
    expect(await leaveBootQueue(db, run(siteId, 0), 1)).toEqual([]);
    expect(await leaveBootQueue(db, run(siteId, 1), 1)).toEqual([]);
    expect(await leaveBootQueue(db, run(siteId, 2), 1)).toEqual([run(siteId, 3).workflowId]);
  });

  it('the reclaim frees the slot of a run that no longer runs, not of one that does, and only while runs queue', async () => {
    const siteId = newId('site');
    const granted = new Date(Date.now() - 2 * RECLAIM_AFTER_MS);
    for (let n = 0; n < 2; n++) await enterBootQueue(db, run(siteId, n), 2);
    await db.bootSlot.updateMany({ where: { siteId }, data: { grantedAt: granted } });
    const ended = run(siteId, 0).workflowId;
    const asked: string[] = [];
    const isRunning = async (workflowId: string) => (asked.push(workflowId), workflowId !== ended);

    // Nobody queued: nothing is asked.
    expect(await reclaimBootSlots(db, siteId, 2, isRunning)).toEqual({ reclaimed: [], granted: [] });
    expect(asked).toEqual([]);

    await enterBootQueue(db, run(siteId, 2), 2);
    expect(await reclaimBootSlots(db, siteId, 2, isRunning)).toEqual({ reclaimed: [ended], granted: [run(siteId, 2).workflowId] });
    expect(asked.sort()).toEqual([ended, run(siteId, 1).workflowId].sort());

    // The running holder was just found running: it is not asked again until RECLAIM_AFTER_MS passed.
    await enterBootQueue(db, run(siteId, 3), 2);
    asked.length = 0;
    expect(await reclaimBootSlots(db, siteId, 2, isRunning)).toEqual({ reclaimed: [], granted: [] });
    expect(asked).toEqual([]);
    const later = new Date(Date.now() + 2 * RECLAIM_AFTER_MS);
    expect(await reclaimBootSlots(db, siteId, 2, isRunning, later)).toEqual({ reclaimed: [], granted: [] });
    expect(asked.sort()).toEqual([run(siteId, 1).workflowId, run(siteId, 2).workflowId].sort());

    // A raised limit: the tick grants the new slot, with no run giving one back.
    expect(await reclaimBootSlots(db, siteId, 3, isRunning)).toEqual({ reclaimed: [], granted: [run(siteId, 3).workflowId] });
  });
});
