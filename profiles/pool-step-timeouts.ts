// A pool's `policy.stepTimeouts`: for its machines, the timeout of a step of the state
// workflows (the shipped profiles), by the step's `use`. Every wait those profiles make ends
// at its step's timeout; this is how an operator states how long this hardware may take (a
// server that POSTs for 25 minutes: `{"metal.ensureRamdisk": "45m"}`), or has a flaky rack
// fail fast. The shipped document is changed before it is compiled, so the plan (and the
// workflow's history) shows the timeout that applies. Deploy profiles carry their own.
import type { Node } from '../generated/prisma-sqlite/client';
import type { Db } from '../services/db';
import type { StepDocument } from '../core/schemas/profiles';
import type { Profile } from './defineProfile';
import { poolPolicyOf } from '../services/pools/pool-policy';

export type StepTimeouts = Readonly<Record<string, string>>;

export function withStepTimeouts(profile: Profile, timeouts: StepTimeouts): Profile {
  if (Object.keys(timeouts).length === 0) return profile;
  const retime = <S extends Omit<StepDocument, 'fallback'> & { fallback?: StepDocument['fallback'] }>(step: S): S => {
    const timeout = timeouts[step.use];
    return { ...step, ...(timeout ? { timeout } : {}), ...(step.fallback ? { fallback: retime(step.fallback) } : {}) };
  };
  return {
    ...profile,
    steps: profile.steps.map(retime),
    ...(profile.acceptance ? { acceptance: profile.acceptance.map(retime) } : {}),
    ...(profile.cleanup ? { cleanup: profile.cleanup.map(retime) } : {}),
  };
}

/** The node's pool's stepTimeouts (none without a pool). */
export async function poolStepTimeouts(db: Db, node: Pick<Node, 'poolId'>): Promise<StepTimeouts> {
  return (await poolPolicyOf(db, node.poolId))?.stepTimeouts ?? {};
}
