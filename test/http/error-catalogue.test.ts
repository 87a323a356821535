/**
 * The error catalogue's own rules (src/errors.ts): every code has a distinct human title, a problem
 * body carries exactly the five standard members plus `field`/`errors` when present, and field
 * errors become `invalid_field` (one) or `validation_failed` (several, or a cross-field rule).
 * Statuses are pinned against the specification's table in spec-codes.test.ts, not here.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, catalogue, fieldErrors, isApiError, ruleBroken, toProblem } from '../../src/errors.ts';

describe('error catalogue', () => {
  it('every code has a distinct, non-empty title that is not the code itself', () => {
    const titles = Object.entries(catalogue).map(([code, e]) => {
      expect(e.title.trim().length, code).toBeGreaterThan(3);
      expect(e.title, code).not.toBe(code);
      return e.title;
    });
    expect(new Set(titles).size).toBe(titles.length);
  });

  it('an ApiError carries its code, status and title; its detail defaults to the title', () => {
    const plain = new ApiError('not_found');
    expect([plain.code, plain.status, plain.title, plain.detail, plain.message, plain.name]).toEqual([
      'not_found',
      404,
      'Not found',
      'Not found',
      'Not found',
      'ApiError',
    ]);
    expect(plain.extras).toEqual({});
    const told = new ApiError('rate_limited', 'slow down', { retryAfter: 3 });
    expect([told.detail, told.message, told.extras.retryAfter]).toEqual(['slow down', 'slow down', 3]);
    expect(isApiError(told)).toBe(true);
    expect(isApiError(new Error('x'))).toBe(false);
    expect(isApiError({ code: 'not_found' })).toBe(false);
  });

  it('one field error is invalid_field with its field; several are validation_failed listing each', () => {
    const one = fieldErrors([{ field: '/limit', detail: 'must be an integer' }]);
    expect([one.code, one.status, one.detail, one.extras]).toEqual([
      'invalid_field',
      422,
      'must be an integer',
      { field: '/limit' },
    ]);
    const errors = [
      { field: '/a', detail: 'x' },
      { field: '/b', detail: 'y' },
    ];
    const two = fieldErrors(errors);
    expect([two.code, two.detail, two.extras]).toEqual(['validation_failed', '2 fields are invalid', { errors }]);
    const rule = ruleBroken('/end', 'end before start');
    expect([rule.code, rule.detail, rule.extras]).toEqual([
      'validation_failed',
      'end before start',
      { errors: [{ field: '/end', detail: 'end before start' }] },
    ]);
  });

  it('a problem body: the five standard members, then field and errors only when present (no undefined members)', () => {
    expect(toProblem(new ApiError('access_denied', 'no'), 'abc')).toStrictEqual({
      code: 'access_denied',
      title: 'Access denied',
      detail: 'no',
      status: 403,
      trace_id: 'abc',
    });
    expect(toProblem(fieldErrors([{ field: '/x', detail: 'bad' }]), null)).toStrictEqual({
      code: 'invalid_field',
      title: 'Invalid field',
      detail: 'bad',
      status: 422,
      trace_id: null,
      field: '/x',
    });
    const errors = [{ field: '/y', detail: 'worse' }];
    expect(toProblem(ruleBroken('/y', 'worse'), null)).toStrictEqual({
      code: 'validation_failed',
      title: 'Validation failed',
      detail: 'worse',
      status: 422,
      trace_id: null,
      errors,
    });
  });
});
