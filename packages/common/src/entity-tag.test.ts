import { describe, expect, it } from 'vitest';
import { entityTagOf, maxEntityTags, noneMatchHolds, parseEntityTags, strongTagsOf } from './entity-tag.js';

describe('entityTagOf', () => {
  it('is a quoted, stable fingerprint of the bytes', () => {
    const tag = entityTagOf(Buffer.from('{"id":"a"}'));
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(entityTagOf(Buffer.from('{"id":"a"}'))).toBe(tag);
    expect(entityTagOf(Buffer.from('{"id":"b"}'))).not.toBe(tag);
  });
});

describe('parseEntityTags', () => {
  it('reads *, one tag, lists with weak tags and empty elements', () => {
    expect(parseEntityTags(' * ')).toEqual({ any: true });
    expect(parseEntityTags('"abc"')).toEqual({ any: false, tags: [{ tag: '"abc"', weak: false }] });
    expect(parseEntityTags('"a", W/"b" ,, "c"')).toEqual({
      any: false,
      tags: [
        { tag: '"a"', weak: false },
        { tag: '"b"', weak: true },
        { tag: '"c"', weak: false },
      ],
    });
    expect(parseEntityTags('""')).toEqual({ any: false, tags: [{ tag: '""', weak: false }] });
  });

  it('refuses malformed headers and too many tags', () => {
    for (const bad of ['', ' ', 'abc', '"a" "b"', '"a', 'W/ "a"', '"a"x', '*, "a"', '"a b"']) expect(parseEntityTags(bad)).toBeNull();
    const many = Array.from({ length: maxEntityTags + 1 }, (_, index) => `"${index}"`).join(',');
    expect(parseEntityTags(many)).toBeNull();
    expect(parseEntityTags(many.slice(0, many.lastIndexOf(',')))).not.toBeNull();
  });
});

describe('comparisons', () => {
  it('If-None-Match compares weakly, * always matches', () => {
    expect(noneMatchHolds(parseEntityTags('W/"x"')!, '"x"')).toBe(false);
    expect(noneMatchHolds(parseEntityTags('"y", "x"')!, '"x"')).toBe(false);
    expect(noneMatchHolds(parseEntityTags('"y"')!, '"x"')).toBe(true);
    expect(noneMatchHolds(parseEntityTags('*')!, '"x"')).toBe(false);
  });

  it('If-Match keeps only strong tags', () => {
    expect(strongTagsOf(parseEntityTags('W/"x", "y"')!)).toEqual(['"y"']);
    expect(strongTagsOf(parseEntityTags('*')!)).toEqual([]);
  });
});
