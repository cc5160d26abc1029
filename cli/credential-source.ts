// Where the CLI's bearer comes from: IRONFLOW_CREDENTIAL holds the bearer itself,
// IRONFLOW_CREDENTIAL_FILE names a file holding it, else the dev stack's
// <dataDir>/root-credential. A value in the wrong variable is refused here, naming the
// variable to use, because the API could only answer UNAUTHENTICATED without saying why.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseBearer } from '../services/bearer';
import { CREDENTIAL_SCHEME } from '../services/credentials';
import { IronflowError } from '../core/errors';

interface CredentialSource {
  bearer?: string;
  /** Which setting the bearer came from, for an UNAUTHENTICATED answer's hint. */
  from?: string;
}

const isCredential = (value: string): boolean => parseBearer(CREDENTIAL_SCHEME, value) !== undefined;
const expected = `an Ironflow API credential (${CREDENTIAL_SCHEME}_<id>.<secret>)`;
/** A credential file is one line; anything far larger is not one. */
const maxFileBytes = 4096;

/** `source` says where the file's name came from, so the error names what to fix. */
function readCredentialFile(file: string, source: string): string {
  const refuse = (why: string) => new IronflowError('INVALID_INPUT', `${file} (${source}) ${why}`, { path: source });
  if (!existsSync(file)) throw refuse('does not exist');
  if (statSync(file).size > maxFileBytes) throw refuse(`is larger than a credential (${maxFileBytes} bytes at most)`);
  const bearer = readFileSync(file, 'utf8').trim();
  if (!isCredential(bearer)) throw refuse(`does not hold ${expected}`);
  return bearer;
}

export function resolveCredential(env: NodeJS.ProcessEnv, dataDir: string): CredentialSource {
  const inline = env.IRONFLOW_CREDENTIAL || undefined;
  const file = env.IRONFLOW_CREDENTIAL_FILE || undefined;
  if (inline && file)
    throw new IronflowError('INVALID_INPUT', 'both IRONFLOW_CREDENTIAL and IRONFLOW_CREDENTIAL_FILE are set: unset one', { path: 'IRONFLOW_CREDENTIAL' });
  if (inline) {
    if (isCredential(inline)) return { bearer: inline, from: 'IRONFLOW_CREDENTIAL' };
    // Never echo the value: it may be some other secret pasted by mistake. A path is safe to name.
    if (existsSync(inline))
      throw new IronflowError(
        'INVALID_INPUT',
        `IRONFLOW_CREDENTIAL holds the credential itself, not a file: it names ${inline}; set IRONFLOW_CREDENTIAL_FILE=${inline} instead`,
        { path: 'IRONFLOW_CREDENTIAL' },
      );
    throw new IronflowError(
      'INVALID_INPUT',
      `IRONFLOW_CREDENTIAL is not ${expected}; to read it from a file, set IRONFLOW_CREDENTIAL_FILE to the file's path`,
      { path: 'IRONFLOW_CREDENTIAL' },
    );
  }
  if (file) return { bearer: readCredentialFile(file, 'IRONFLOW_CREDENTIAL_FILE'), from: `IRONFLOW_CREDENTIAL_FILE (${file})` };
  const rootCredential = path.join(dataDir, 'root-credential');
  if (existsSync(rootCredential)) return { bearer: readCredentialFile(rootCredential, 'the dev stack’s default credential file'), from: rootCredential };
  return {};
}

/** The API's refusal of the credential, naming where the CLI took it from and how to set another. */
export function withCredentialHint(err: IronflowError, from: string | undefined): IronflowError {
  const hint = from
    ? `the credential came from ${from}`
    : `no credential was found: set IRONFLOW_CREDENTIAL to the bearer or IRONFLOW_CREDENTIAL_FILE to a file holding it`;
  return new IronflowError(err.code, `${err.message} (${hint})`, err.details);
}
