import type { Label } from '../../domain/labels.js';
import { html, type SafeHtml } from './escape.js';

/** WCAG relative luminance of `#RRGGBB` (0 = black, 1 = white). */
export function relativeLuminance(color: string): number {
  const channel = (offset: number): number => {
    const value = Number.parseInt(color.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

export const contrastRatio = (a: number, b: number): number => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

/**
 * The chips' two text colours (app.css `.chip-dark` #000, `.chip-light` #fff): with pure black and
 * white, the better of the two keeps at least 4.58:1 on any background.
 */
const darkText = 0;
const lightText = 1;

/** Which text keeps the better contrast on the label's colour: dark text on light colours, white on dark ones. */
export function chipText(color: string): 'dark' | 'light' {
  if (!/^#[0-9A-Fa-f]{6}$/.test(color)) return 'dark';
  const background = relativeLuminance(color);
  return contrastRatio(background, darkText) >= contrastRatio(background, lightText) ? 'dark' : 'light';
}

/**
 * A label as a coloured chip. The CSP allows no inline style, so the colour is an SVG `fill`
 * (a presentation attribute) stretched behind the name; the text colour is chosen by luminance.
 */
export function labelChip(label: Label): SafeHtml {
  const fill = /^#[0-9A-Fa-f]{6}$/.test(label.color) ? label.color : '#E5E7EB';
  return html`<span class="chip chip-${chipText(fill)}"><svg class="chip-fill" aria-hidden="true" focusable="false" viewBox="0 0 1 1" preserveAspectRatio="none"><rect width="1" height="1" fill="${fill}"/></svg><span class="chip-name">${label.name}</span></span>`;
}
