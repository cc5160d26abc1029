// A test that needs command-line tools fails at once, naming them and the apt-get line that
// installs them (scripts/test-deps.sh installs them all), never skips.
import { execFileSync } from 'node:child_process';

/** Throws unless every [tool, Debian package] is on PATH; `who` names the test in the message. */
export function requireTools(who: string, tools: Array<[tool: string, pkg: string]>): void {
  const missing = tools.filter(([tool]) => {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  const packages = [...new Set(missing.map(([, pkg]) => pkg))];
  if (packages.length > 0)
    throw new Error(`${who} needs ${missing.map(([t]) => t).join(', ')}: apt-get install -y ${packages.join(' ')} (or bash scripts/test-deps.sh)`);
}
