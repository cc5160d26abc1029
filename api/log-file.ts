// The API logs to a file in its data dir by default, so an INTERNAL answer can point at a
// log that exists: `api.log`, owner-only (0600, also when an earlier run left it wider),
// appended to across restarts, its lines redacted like every API log line (api/server.ts).
import { chmodSync, createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';

export const API_LOG_FILE = 'api.log';

/** The API's default logging: `level` (info unless given) into `<dataDir>/api.log`. */
export function defaultApiLog(dataDir: string, level = 'info'): { level: string; file: string } {
  return { level, file: path.join(dataDir, API_LOG_FILE) };
}

/** Opens the log for appending, owner-only. */
export function openLogFile(file: string): WriteStream {
  const stream = createWriteStream(file, { flags: 'a', mode: 0o600 });
  // The mode applies only when the file is created: an existing file is tightened too.
  stream.once('open', () => chmodSync(file, 0o600));
  return stream;
}
