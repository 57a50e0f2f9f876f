import { describe, expect, it } from 'vitest';
import { labelColor, labelName } from './labels.js';

describe('label names', () => {
  it('are trimmed, 1 to 50 characters', () => {
    expect(labelName('  bug  ')).toBe('bug');
    expect(labelName('x'.repeat(50))).toHaveLength(50);
    expect(() => labelName('x'.repeat(51))).toThrow(/at most 50/);
    expect(() => labelName('   ')).toThrow(/required/);
    expect(() => labelName(undefined)).toThrow(/required/);
  });

  it('count characters, not UTF-16 units', () => {
    expect(labelName('🐛'.repeat(50))).toHaveLength(100);
  });

  it('refuse control characters', () => {
    expect(() => labelName('a\nb')).toThrow(/control/);
    expect(() => labelName('a\u0000b')).toThrow(/control/);
  });
});

describe('label colours', () => {
  it('are #RRGGBB, stored upper-case', () => {
    expect(labelColor('#a1b2c3')).toBe('#A1B2C3');
    expect(labelColor(' #FF0000 ')).toBe('#FF0000');
  });

  it('refuse anything else', () => {
    for (const bad of ['', 'red', '#fff', '#GGGGGG', 'FF0000', '#FF00001', undefined]) expect(() => labelColor(bad)).toThrow(/#RRGGBB/);
  });
});
