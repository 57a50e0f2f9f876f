import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { resolveDescription } from '../description.js';
import {
  markdownToRichText,
  markerLineCost,
  maxMarkdownLineCost,
  maxNodeCount,
  maxRenderedBytes,
  normaliseDescription,
  renderedDescription,
  RichTextError,
  type RichTextNode,
} from './index.js';

function messageOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (error instanceof RichTextError || error instanceof Error) return error.message;
  }
  throw new Error('expected an error');
}

const tooManyLines = `description has too many lines to parse (max ${maxMarkdownLineCost}, a line starting with a heading, list or quote marker counting as ${markerLineCost})`;

describe('Markdown memory bounds (issue 14: 100 KB of one-line blocks exhausted a 128 MB heap)', () => {
  // The inputs that crashed the tasks service: each is refused before micromark sees it.
  const bombs = { headings: '# a\n'.repeat(24_997), paragraphs: 'a\n\n'.repeat(33_000), bullets: '- a\n'.repeat(24_997) };

  for (const [name, markdown] of Object.entries(bombs)) {
    it(`refuses ${markdown.length} characters of one-line ${name} at once, with little heap`, () => {
      const before = getHeapStatistics().total_heap_size;
      const started = performance.now();
      expect(messageOf(() => markdownToRichText(markdown))).toBe(tooManyLines);
      expect(performance.now() - started).toBeLessThan(500);
      expect(getHeapStatistics().total_heap_size - before).toBeLessThan(32 * 1024 * 1024);
    });
  }

  it('parses the largest line budget of list items and headings', () => {
    const items = maxMarkdownLineCost / markerLineCost;
    const lines = (line: string, count: number): string => Array.from({ length: count }, () => line).join('\n');
    expect(markdownToRichText(lines('- a', items))[0]?.children).toHaveLength(items);
    expect(messageOf(() => markdownToRichText(lines('- a', items + 1)))).toBe(tooManyLines);
    expect(markdownToRichText(lines('# a', items))).toHaveLength(items);
  });

  it(`applies the ${maxNodeCount}-node limit to Markdown`, () => {
    // 3 334 paragraphs of three leaves each (plain, bold, plain): 13 336 nodes within the line budget.
    const markdown = 'a **b** c\n\n'.repeat(3_334);
    expect(messageOf(() => markdownToRichText(markdown))).toBe(`description has too many nodes (max ${maxNodeCount})`);
    expect(markdownToRichText('a **b** c\n\n'.repeat(2_500))).toHaveLength(2_500);
  });

  it('applies the node limit to Markdown kept as plain paragraphs', () => {
    expect(messageOf(() => markdownToRichText('> q\n\n'.repeat(20_000)))).toBe(`description has too many nodes (max ${maxNodeCount})`);
  });

  it('still parses a long ordinary description and prose of 100 000 characters', () => {
    const section = '## Step\n\nDo **this** and *that*.\n\n- one\n- two\n\n> note\n\n';
    expect(markdownToRichText(section.repeat(100))).toHaveLength(400);
    expect(markdownToRichText('Lorem ipsum dolor sit amet. '.repeat(3_571))).toHaveLength(1);
  });
});

describe('rendered size cap', () => {
  /** `count` leaves of `textLength` characters, each with every mark (about 90 bytes of JSON each). */
  const marked = (count: number, textLength: number): RichTextNode[] => [
    {
      type: 'paragraph',
      children: Array.from({ length: count }, () => ({ type: 'text', text: 'x'.repeat(textLength), bold: true, italic: true, strikethrough: true, code: true, children: [] }) as RichTextNode),
    },
  ];

  it('accepts a description of exactly the cap and refuses one byte more, saying the limit', () => {
    const base = renderedDescription(marked(9_000, 10)).length;
    // Grow the last leaf's text to land exactly on the cap.
    const nodes = marked(9_000, 10);
    const last = (nodes[0] as { children: Array<{ text: string }> }).children.at(-1)!;
    last.text += 'y'.repeat(maxRenderedBytes - base);
    expect(renderedDescription(nodes)).toHaveLength(maxRenderedBytes);
    last.text += 'y';
    expect(messageOf(() => renderedDescription(nodes))).toBe(`description is too large: ${maxRenderedBytes + 1} bytes as rich-text JSON (max ${maxRenderedBytes})`);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const nodes: RichTextNode[] = [{ type: 'paragraph', children: [{ type: 'text', text: '€'.repeat(360_000), children: [] }] }];
    expect(messageOf(() => renderedDescription(nodes))).toMatch(/^description is too large: \d+ bytes as rich-text JSON \(max 1048576\)$/);
  });

  it('is applied when a description is resolved (INVALID_ARGUMENT)', () => {
    const json = JSON.stringify(marked(9_999, 10).map((node) => ({ ...node, children: (node as { children: unknown[] }).children })));
    expect(messageOf(() => resolveDescription({ nodesJson: json }))).toMatch(/^description is too large/);
  });
});

describe('NUL (U+0000), which Postgres text and jsonb cannot hold', () => {
  it('is refused in Markdown, in leaf text and in element types', () => {
    expect(messageOf(() => normaliseDescription('a\0b'))).toBe('description must not contain the NUL character (U+0000)');
    expect(messageOf(() => normaliseDescription([{ type: 'paragraph', children: [{ text: 'a\0' }] }] as RichTextNode[]))).toBe(
      'invalid description: description[0].children[0].text: must not contain the NUL character (U+0000)',
    );
    expect(messageOf(() => normaliseDescription([{ type: 'p\0', children: [{ text: 'a' }] }] as RichTextNode[]))).toBe(
      'invalid description: description[0].type: must not contain the NUL character (U+0000)',
    );
  });
});
