// The app's SQLite database runs in WAL mode with synchronous = FULL (services/db.ts): a commit
// is in the log and synced before it returns, so not even a power loss takes it back.
import { describe, expect, it } from 'vitest';
import { databaseTarget } from '../../core/database-target';
import { createDb } from '../../services/db';
import { testConfig } from '../helpers/control-plane';

const target = databaseTarget(await testConfig());

describe.runIf(target.provider === 'sqlite')('the SQLite database', () => {
  it('is in WAL mode, syncing every commit', async () => {
    const db = await createDb(target);
    try {
      expect(await db.$queryRawUnsafe('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
      // 2 is FULL: NORMAL (1) may lose the last commits on a power loss.
      expect(await db.$queryRawUnsafe('PRAGMA synchronous')).toEqual([{ synchronous: 2n }]);
    } finally {
      await db.$disconnect();
    }
  });
});
