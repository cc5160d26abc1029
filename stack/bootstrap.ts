// First start: the root tenant and a root credential, its bearer written once to a new
// 0600 file in the data dir (and printed by the dev stack).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCredential, ensureTenant } from '../services/credentials';
import type { Db } from '../services/db';
import { ALL_PERMISSIONS, ROOT_TENANT } from '../core/permissions';

function rootCredentialFile(dataDir: string): string {
  return path.join(dataDir, 'root-credential');
}

export async function bootstrapRoot(db: Db, dataDir: string): Promise<{ created: boolean; bearer: string; file: string }> {
  const file = rootCredentialFile(dataDir);
  if (existsSync(file)) return { created: false, bearer: readFileSync(file, 'utf8').trim(), file };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const bearer = await db.$transaction(async (tx) => {
    await ensureTenant(tx, ROOT_TENANT, 'Platform (root)');
    const credential = await createCredential(tx, { tenantId: ROOT_TENANT, name: 'root (first start)', permissions: [ALL_PERMISSIONS] });
    return credential.bearer;
  });
  // 'wx': never overwrite a credential file a concurrent start may have written.
  writeFileSync(file, `${bearer}\n`, { mode: 0o600, flag: 'wx' });
  return { created: true, bearer, file };
}
