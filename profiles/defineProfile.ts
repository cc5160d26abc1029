// defineProfile(document): checks a profile and returns a deeply frozen copy, or throws
// INVALID_CONFIG naming the first offending field (`steps[2].timeout`).
import { IronflowError } from '../core/errors';
import { profileDepthProblem, type ProfileDocument } from '../core/schemas/profiles';
import { stepRegistry } from '../core/steps/builtin';
import type { StepRegistry } from '../core/steps/registry';
import { checkProfile } from './check';

export type Profile = Readonly<ProfileDocument>;

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

export function profileError(problems: ReadonlyArray<{ path: string; message: string }>, code: 'INVALID_CONFIG' | 'INVALID_INPUT', prefix = ''): IronflowError {
  const first = problems[0] ?? { path: '', message: 'invalid profile' };
  const path = prefix ? (first.path ? `${prefix}.${first.path}` : prefix) : first.path;
  return new IronflowError(code, `${path || 'profile'}: ${first.message}`, {
    path,
    problems: problems.map((p) => ({ ...p, path: prefix ? `${prefix}.${p.path}` : p.path })),
  });
}

export function defineProfile(document: unknown, registry: StepRegistry = stepRegistry): Profile {
  // Before checkProfile, whose checks walk the document recursively.
  const tooDeep = profileDepthProblem(document);
  if (tooDeep) throw profileError([tooDeep], 'INVALID_CONFIG');
  const { profile, problems } = checkProfile(document, registry);
  if (!profile) throw profileError(problems, 'INVALID_CONFIG');
  return deepFreeze(structuredClone(profile));
}
