import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatPath, fromZodError, httpStatusOf, IronflowError, parseWith } from '../../core/errors';

describe('the error model', () => {
  it('formats paths the way the spec writes them', () => {
    expect(formatPath(['steps', 2, 'timeout'])).toBe('steps[2].timeout');
    expect(formatPath([0, 'a'])).toBe('[0].a');
    expect(formatPath([])).toBe('');
  });

  it('names the first offending field of an input', () => {
    const schema = z.object({ steps: z.array(z.object({ timeout: z.string().regex(/^\d+[smh]$/) })) });
    const err = (() => {
      try {
        parseWith(schema, { steps: [{ timeout: '1s' }, { timeout: '2m' }, { timeout: 'soon' }] }, 'INVALID_CONFIG');
      } catch (e) {
        return e as IronflowError;
      }
      throw new Error('parseWith accepted a bad input');
    })();
    expect(err.code).toBe('INVALID_CONFIG');
    expect(err.details.path).toBe('steps[2].timeout');
    expect(err.message).toContain('steps[2].timeout');
  });

  it('prefixes a path when the input sits inside a larger document', () => {
    const result = z.object({ a: z.number() }).safeParse({ a: 'x' });
    expect(result.success).toBe(false);
    if (!result.success) expect(fromZodError(result.error, 'INVALID_INPUT', 'with').details.path).toBe('with.a');
  });

  it('maps every code to the HTTP status DESIGN.md gives', () => {
    expect(httpStatusOf.INVALID_INPUT).toBe(400);
    expect(httpStatusOf.INVALID_CONFIG).toBe(400);
    expect(httpStatusOf.UNAUTHENTICATED).toBe(401);
    expect(httpStatusOf.PERMISSION_DENIED).toBe(403);
    expect(httpStatusOf.NOT_FOUND).toBe(404);
    expect(httpStatusOf.CONFLICT).toBe(409);
    expect(httpStatusOf.INVALID_STATE).toBe(409);
    expect(httpStatusOf.UNSUPPORTED).toBe(422);
    expect(httpStatusOf.DRIVER_ERROR).toBe(502);
    expect(httpStatusOf.NO_SITE_AGENT).toBe(503);
  });
});
