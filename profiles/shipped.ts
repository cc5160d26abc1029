// The profiles Ironflow ships: JSON files in profiles/shipped/, read-only, listed under
// the tenant `builtin`. Each is checked with defineProfile when first read, so a broken
// shipped profile fails loudly at startup, not at a deploy.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { defineProfile, type Profile } from './defineProfile';

const shippedDir = fileURLToPath(new URL('./shipped/', import.meta.url));
let loaded: Profile[] | undefined;

/** Modules (metal, later issues) add their own shipped profiles here. */
const extra: Profile[] = [];
export function shipProfiles(profiles: Iterable<Profile>): void {
  extra.push(...profiles);
}

export function shippedProfiles(): Profile[] {
  loaded ??= readdirSync(shippedDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      try {
        return defineProfile(JSON.parse(readFileSync(path.join(shippedDir, file), 'utf8')));
      } catch (err) {
        throw new Error(`shipped profile ${file}: ${(err as Error).message}`);
      }
    });
  return [...loaded, ...extra];
}
