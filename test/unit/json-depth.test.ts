// Deeply nested documents are refused with a path before anything walks them recursively.
import { describe, expect, it } from 'vitest';
import { isIronflowError } from '../../core/errors';
import { pathPastDepth } from '../../core/json-depth';
import { MAX_PROFILE_DEPTH, profileCreateSchema } from '../../core/schemas/profiles';
import { defineProfile } from '../../profiles/defineProfile';

const nested = (depth: number, wrap: (inner: unknown) => unknown): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = wrap(value);
  return value;
};
// A host-config unit nobody registered takes free-form settings: the place a deep value fits.
const document = (deep: unknown) => ({
  id: 'deep',
  version: 1,
  target: 'metal',
  hostConfig: { 'site-tuning': { deep } },
  steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' } }],
});

describe('pathPastDepth', () => {
  it('names the first container past the depth, in document order, and nothing within it', () => {
    expect(pathPastDepth({ a: { b: 1 } }, 2)).toBeUndefined();
    expect(pathPastDepth({ a: { b: {} } }, 2)).toEqual(['a', 'b']);
    expect(pathPastDepth([[1], { x: [[2]] }], 3)).toEqual([1, 'x', 0]);
    expect(pathPastDepth({ first: { deep: { deeper: {} } }, second: { deep: { deeper: {} } } }, 3)).toEqual(['first', 'deep', 'deeper']);
    expect(pathPastDepth('scalar', 0)).toBeUndefined();
    expect(
      pathPastDepth(
        nested(100_000, (inner) => [inner]),
        8,
      ),
    ).toHaveLength(8);
  });
});

describe('a deeply nested profile document', () => {
  it('is INVALID_INPUT at the API schema, at the path where the depth ran out', () => {
    const parsed = profileCreateSchema.safeParse({ tenantId: 'root', document: document(nested(5000, (inner) => ({ a: inner }))) });
    expect(parsed.success).toBe(false);
    const issue = parsed.error?.issues[0];
    expect(issue?.path.slice(0, 5)).toEqual(['document', 'hostConfig', 'site-tuning', 'deep', 'a']);
    expect(issue?.path).toHaveLength(MAX_PROFILE_DEPTH + 1);
    expect(issue?.message).toMatch(/nested deeper than/);
  });

  it('is INVALID_CONFIG from defineProfile, not a stack overflow', () => {
    for (const deep of [nested(5000, (inner) => ({ a: inner })), nested(5000, (inner) => [inner])]) {
      let caught: unknown;
      try {
        defineProfile(document(deep));
      } catch (error) {
        caught = error;
      }
      expect(isIronflowError(caught) && caught.code).toBe('INVALID_CONFIG');
      expect(isIronflowError(caught) && String(caught.details.path)).toMatch(/^hostConfig\.site-tuning\.deep[.[]/);
    }
  });

  it('is taken up to the depth, and refused one level past it', () => {
    // The document, hostConfig and the unit are three levels.
    const deepest = nested(MAX_PROFILE_DEPTH - 3, (inner) => ({ a: inner }));
    expect(profileCreateSchema.safeParse({ tenantId: 'root', document: document(deepest) }).success).toBe(true);
    expect(defineProfile(document(deepest)).id).toBe('deep');
    expect(profileCreateSchema.safeParse({ tenantId: 'root', document: document({ a: deepest }) }).success).toBe(false);
    expect(() => defineProfile(document({ a: deepest }))).toThrow(/nested deeper than/);
  });
});
