// The plan `adopting` runs (spec 004: the pool's acceptance checks, on the server, no provision
// profile): one `acceptance.check` step on the node's own agent per check of the pool's policy,
// each with the check's timeout and no retry, so the first failing check fails the adoption
// and is named in lastError. Compiled like a profile, so the history shows exactly what ran.
import { BUILTIN_TENANT } from '../core/permissions';
import type { Plan } from '../core/plan';
import type { PoolPolicy } from '../core/schemas/pools';
import { compileProfile } from './compiler';

export const ACCEPTANCE_PROFILE_ID = 'pool-acceptance';

export function acceptancePlan(checks: PoolPolicy['acceptanceChecks']): Plan {
  if (checks.length === 0) {
    // The pool's checks were removed while the node waited: nothing left to check.
    return {
      profile: { tenantId: BUILTIN_TENANT, id: ACCEPTANCE_PROFILE_ID, version: 1, ref: `${ACCEPTANCE_PROFILE_ID}@1` },
      target: 'metal',
      role: 'host',
      steps: [],
      acceptance: [],
      cleanup: [],
    };
  }
  return compileProfile(
    {
      id: ACCEPTANCE_PROFILE_ID,
      version: 1,
      target: 'metal',
      description: "The pool's acceptance checks, run by the adopted machine's node agent.",
      steps: checks.map((check) => ({
        use: 'acceptance.check',
        on: 'node',
        with: { name: check.name, ...(check.params ? { params: check.params } : {}) },
        timeout: `${check.timeoutSeconds}s`,
        retries: 0,
      })),
    },
    BUILTIN_TENANT,
  );
}
