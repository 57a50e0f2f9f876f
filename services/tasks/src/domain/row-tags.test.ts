import { describe, expect, test } from 'vitest';
import { rowTagOf, versionsOfTags } from './row-tags.js';

describe('row entity tags', () => {
  test('a tag is the kind letter and the version, quoted, and reads back to that version', () => {
    expect(rowTagOf('project', '1')).toBe('"p1"');
    expect(rowTagOf('section', '42')).toBe('"s42"');
    expect(versionsOfTags('project', [rowTagOf('project', '42')])).toEqual(['42']);
    expect(versionsOfTags('section', [rowTagOf('section', '7'), rowTagOf('section', '9')])).toEqual(['7', '9']);
  });

  test("another kind's tag, a weak-looking, unquoted, zero, signed or over-long version names no version", () => {
    const tags = ['"s3"', 'W/"p3"', 'p3', '"p0"', '"p-1"', '"p01"', '"p3 "', `"p${'9'.repeat(19)}"`, '"pabc"', '"l3"', '*'];
    expect(versionsOfTags('project', tags)).toEqual([]);
    expect(versionsOfTags('project', [`"p${'9'.repeat(18)}"`])).toEqual(['9'.repeat(18)]);
  });
});
