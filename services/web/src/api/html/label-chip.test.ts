import { describe, expect, it } from 'vitest';
import { chipText, contrastRatio, labelChip, relativeLuminance } from './label-chip.js';

describe('label chips', () => {
  it('choose the text colour with the better contrast', () => {
    expect(chipText('#FFFFFF')).toBe('dark');
    expect(chipText('#FDE047')).toBe('dark');
    expect(chipText('#000000')).toBe('light');
    expect(chipText('#1D4ED8')).toBe('light');
    expect(chipText('#7f1d1d')).toBe('light');
  });

  it('keep at least 4.5:1 (WCAG AA) on any colour', () => {
    const hex = (value: number): string => value.toString(16).padStart(2, '0');
    for (let r = 0; r < 256; r += 15) {
      for (let g = 0; g < 256; g += 15) {
        for (let b = 0; b < 256; b += 15) {
          const color = `#${hex(r)}${hex(g)}${hex(b)}`;
          const background = relativeLuminance(color);
          const ratio = chipText(color) === 'dark' ? contrastRatio(background, 0) : contrastRatio(background, 1);
          expect(ratio, color).toBeGreaterThanOrEqual(4.5);
        }
      }
    }
  });

  it('escape the name and never put an unchecked colour in the markup', () => {
    const chip = labelChip({ id: 'l', name: '<script>x</script>', color: '"><script>' }).value;
    expect(chip).not.toContain('<script>');
    expect(chip).toContain('&lt;script&gt;');
    expect(chip).toContain('fill="#E5E7EB"');
  });
});
