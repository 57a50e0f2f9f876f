import { describe, expect, it } from 'vitest';
import { parseEntityTags } from '@tws/common';
import { HttpError } from '../../plugins/errors.js';
import { conditionOf, ifMatchTags, listTagOf, listVersionOf } from './conditional.js';

describe('conditional headers', () => {
  it('absent is no condition; malformed is a 400 naming the header', () => {
    expect(conditionOf(undefined, 'if-match')).toBeUndefined();
    expect(() => conditionOf('nope', 'if-none-match')).toThrow(HttpError);
    try {
      conditionOf('nope', 'if-none-match');
    } catch (error) {
      expect((error as HttpError).statusCode).toBe(400);
      expect((error as HttpError).message).toMatch(/^headers\.if-none-match: /);
    }
  });

  it('If-Match sends its strong tags; * and absence send none; only weak tags is a 412', () => {
    expect(ifMatchTags(undefined)).toEqual([]);
    expect(ifMatchTags(parseEntityTags('*')!)).toEqual([]);
    expect(ifMatchTags(parseEntityTags('"a", W/"b", "c"')!)).toEqual(['"a"', '"c"']);
    expect(() => ifMatchTags(parseEntityTags('W/"a"')!)).toThrow(expect.objectContaining({ statusCode: 412 }) as Error);
  });

  it('a list tag names its version', () => {
    expect(listTagOf('42')).toBe('"l42"');
    expect(listVersionOf(parseEntityTags('"abc", W/"l42", "l7"')!)).toBe('42');
    expect(listVersionOf(parseEntityTags('"l", "lx1", "l1234567890123456789"')!)).toBeUndefined();
    expect(listVersionOf(parseEntityTags('*')!)).toBeUndefined();
    expect(listVersionOf(undefined)).toBeUndefined();
  });
});
