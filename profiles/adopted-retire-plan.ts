// Retiring an adopted node (spec 004: retire is legal from adopting and adopted): the machine
// has no BMC and was never reimaged by us, so there is nothing to power off or crypto-erase;
// retiring it revokes its identity (certificates, tokens) and leaves its own OS as it is.
// Built here, not shipped: the shipped metal-retire profiles are for enrolled machines.
import { BUILTIN_TENANT } from '../core/permissions';
import type { Plan } from '../core/plan';
import { compileProfile } from './compiler';

export const ADOPTED_RETIRE_PROFILE_ID = 'metal-retire-adopted';

export function adoptedRetirePlan(): Plan {
  return compileProfile(
    {
      id: ADOPTED_RETIRE_PROFILE_ID,
      version: 1,
      target: 'metal',
      description: 'Retiring an adopted machine (no BMC): revoke its identity.',
      steps: [{ use: 'metal.revokeIdentity' }],
    },
    BUILTIN_TENANT,
  );
}
