import { describe, expect, it } from 'vitest';
import { DomainError } from '@tws/common';
import { checkSizeWithinPlan, MB, parseDeclaredSize, planOf, uploadLimitBytes, validateContentType } from './limits.js';

function failure(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('plan size limits', () => {
  it('uses MB = 2^20 bytes: 25 MB free, 100 MB pro', () => {
    expect(MB).toBe(1_048_576);
    expect(uploadLimitBytes).toEqual({ free: 26_214_400, pro: 104_857_600 });
  });

  it('accepts sizes up to and including the limit', () => {
    expect(() => checkSizeWithinPlan(1, 'free')).not.toThrow();
    expect(() => checkSizeWithinPlan(26_214_400, 'free')).not.toThrow();
    expect(() => checkSizeWithinPlan(26_214_401, 'pro')).not.toThrow();
    expect(() => checkSizeWithinPlan(104_857_600, 'pro')).not.toThrow();
  });

  it('rejects one byte over the limit with an invalid_argument naming the plan limit', () => {
    const free = failure(() => checkSizeWithinPlan(26_214_401, 'free'));
    expect(free.kind).toBe('invalid_argument');
    expect(free.message).toBe("size 26214401 bytes exceeds the free plan's upload limit of 25 MB (26214400 bytes)");
    const pro = failure(() => checkSizeWithinPlan(104_857_601, 'pro'));
    expect(pro.message).toContain('100 MB (104857600 bytes)');
  });

  it('maps the tasks plan enum, unknown plans getting the smallest limit', () => {
    expect(planOf('PLAN_PRO')).toBe('pro');
    expect(planOf('PLAN_FREE')).toBe('free');
    expect(planOf('PLAN_UNSPECIFIED')).toBe('free');
  });
});

describe('declared size', () => {
  it.each([
    ['1', 1],
    ['26214400', 26_214_400],
    [42, 42],
  ])('parses %j', (raw, expected) => {
    expect(parseDeclaredSize(raw)).toBe(expected);
  });

  it.each(['0', '-1', '1.5', '', 'abc', '1e3', '99999999999999999999'])('rejects %j', (raw) => {
    expect(failure(() => parseDeclaredSize(raw)).message).toBe('size must be a positive integer (bytes)');
  });
});

describe('content type', () => {
  it.each([
    'image/png',
    'application/pdf',
    'text/plain; charset=utf-8',
    'text/plain;charset="utf-8"',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'image/svg+xml',
    'Text/Plain',
    'application/octet-stream',
  ])('accepts %j unchanged', (value) => {
    expect(validateContentType(value)).toBe(value);
  });

  it.each([
    '',
    'png',
    'image/',
    '/png',
    'image/png/extra',
    'image /png',
    'image/png; charset',
    'image/png;',
    'x-custom/thing',
    'foo/bar',
    'text/plain; charset=ü',
    'text/plain\r\nX-Injected: 1',
    `application/${'a'.repeat(260)}`,
  ])('rejects %j', (value) => {
    expect(failure(() => validateContentType(value)).kind).toBe('invalid_argument');
  });
});
