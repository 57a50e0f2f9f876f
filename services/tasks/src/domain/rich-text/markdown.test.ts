import { describe, expect, it } from 'vitest';
import {
  markdownToRichText,
  maxNodeDepth,
  normaliseDescription,
  plainText,
  richTextDocumentSchema,
  RichTextError,
  type Marks,
  type RichTextElement,
  type RichTextLeaf,
  type RichTextNode,
} from './index.js';

const leaf = (text: string, marks: Marks = {}): RichTextLeaf => ({ type: 'text', text, ...marks, children: [] });
const node = (type: string, ...children: RichTextNode[]): RichTextElement => ({ type, children });
const paragraph = (...children: RichTextNode[]): RichTextElement => node('paragraph', ...children);
const item = (...children: RichTextNode[]): RichTextElement => node('list-item', ...children);

/** Nests `inner` in `levels` elements of `type`. */
function nested(type: string, levels: number, inner: RichTextNode): RichTextNode {
  let result = inner;
  for (let level = 0; level < levels; level++) result = node(type, result);
  return result;
}

function depthOf(nodes: readonly RichTextNode[]): number {
  let deepest = 0;
  const pending = nodes.map((child) => ({ child, depth: 1 }));
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    deepest = Math.max(deepest, next.depth);
    for (const child of next.child.children) pending.push({ child, depth: next.depth + 1 });
  }
  return deepest;
}

function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

function expectRichTextError(action: () => unknown, message: string): void {
  const error = thrownBy(action);
  expect(error).toBeInstanceOf(RichTextError);
  expect((error as RichTextError).message).toBe(message);
}

describe('markdownToRichText', () => {
  it('parses #, ## and ### headings, and deeper ones as heading-three', () => {
    expect(markdownToRichText('# One\n## Two\n### Three\n#### Four')).toEqual([
      node('heading-one', leaf('One')),
      node('heading-two', leaf('Two')),
      node('heading-three', leaf('Three')),
      node('heading-three', leaf('Four')),
    ]);
  });

  it('parses - bullet lists', () => {
    expect(markdownToRichText('- apples\n- pears')).toEqual([node('bulleted-list', item(leaf('apples')), item(leaf('pears')))]);
  });

  it('parses 1. numbered lists', () => {
    expect(markdownToRichText('1. first\n2. second\n3. third')).toEqual([
      node('numbered-list', item(leaf('first')), item(leaf('second')), item(leaf('third'))),
    ]);
  });

  it('nests a list inside the item it is indented under', () => {
    expect(markdownToRichText('- fruit\n  1. apples\n  2. pears\n- vegetables')).toEqual([
      node(
        'bulleted-list',
        item(leaf('fruit'), node('numbered-list', item(leaf('apples')), item(leaf('pears')))),
        item(leaf('vegetables')),
      ),
    ]);
  });

  it('joins the paragraphs of one list item with a line break', () => {
    expect(markdownToRichText('- first paragraph\n\n  second **one**\n- next')).toEqual([
      node('bulleted-list', item(leaf('first paragraph\nsecond '), leaf('one', { bold: true })), item(leaf('next'))),
    ]);
  });

  it('marks **bold**, *italic*, ***bold italic***, ~~strikethrough~~ and `code`', () => {
    expect(markdownToRichText('**bold** *italic* ***both*** ~~struck~~ `code`')).toEqual([
      paragraph(
        leaf('bold', { bold: true }),
        leaf(' '),
        leaf('italic', { italic: true }),
        leaf(' '),
        leaf('both', { bold: true, italic: true }),
        leaf(' '),
        leaf('struck', { strikethrough: true }),
        leaf(' '),
        leaf('code', { code: true }),
      ),
    ]);
  });

  it('combines nested marks', () => {
    expect(markdownToRichText('**a *b ~~c `d`~~* e**')).toEqual([
      paragraph(
        leaf('a ', { bold: true }),
        leaf('b ', { bold: true, italic: true }),
        leaf('c ', { bold: true, italic: true, strikethrough: true }),
        leaf('d', { bold: true, italic: true, strikethrough: true, code: true }),
        leaf(' e', { bold: true }),
      ),
    ]);
  });

  it('marks formatting inside headings and list items', () => {
    expect(markdownToRichText('## A *quick* plan\n\n- ~~old~~ new')).toEqual([
      node('heading-two', leaf('A '), leaf('quick', { italic: true }), leaf(' plan')),
      node('bulleted-list', item(leaf('old', { strikethrough: true }), leaf(' new'))),
    ]);
  });

  it('does not strike through with single tildes', () => {
    expect(markdownToRichText('in ~5 minutes or ~10')).toEqual([paragraph(leaf('in ~5 minutes or ~10'))]);
  });

  it('parses > block quotes, nested ones included', () => {
    expect(markdownToRichText('> quoted\n> still quoted\n>\n> > inner')).toEqual([
      node('block-quote', paragraph(leaf('quoted\nstill quoted')), node('block-quote', paragraph(leaf('inner')))),
    ]);
  });

  it('separates blocks at blank lines and keeps line breaks within a paragraph', () => {
    expect(markdownToRichText('first line\nsecond line\n\nnext paragraph\n\n\n- item\n\n> quote')).toEqual([
      paragraph(leaf('first line\nsecond line')),
      paragraph(leaf('next paragraph')),
      node('bulleted-list', item(leaf('item'))),
      node('block-quote', paragraph(leaf('quote'))),
    ]);
  });

  it('turns hard line breaks into \\n', () => {
    expect(markdownToRichText('one  \ntwo\\\nthree')).toEqual([paragraph(leaf('one\ntwo\nthree'))]);
  });

  it('keeps the text of links and the alt text of images', () => {
    expect(markdownToRichText('see [the *docs*](https://example.com) ![a chart](chart.png)')).toEqual([
      paragraph(leaf('see the '), leaf('docs', { italic: true }), leaf(' a chart')),
    ]);
  });

  it('keeps HTML verbatim as text', () => {
    expect(markdownToRichText('a <b onclick="x()">b</b> c\n\n<div>\n**not bold**\n</div>')).toEqual([
      paragraph(leaf('a <b onclick="x()">b</b> c')),
      paragraph(leaf('<div>\n**not bold**\n</div>')),
    ]);
  });

  it('keeps fenced code as a code block and skips thematic breaks', () => {
    expect(markdownToRichText('```ts\nconst a = 1;\n```\n\n---\n\nafter')).toEqual([
      node('code-block', leaf('const a = 1;')),
      paragraph(leaf('after')),
    ]);
  });

  it('gives empty headings, items and quotes one empty leaf', () => {
    expect(markdownToRichText('#\n\n-\n\n>')).toEqual([
      node('heading-one', leaf('')),
      node('bulleted-list', item(leaf(''))),
      node('block-quote', paragraph(leaf(''))),
    ]);
  });

  it('does not parse setext headings, which the contract does not list', () => {
    expect(markdownToRichText('Title\n=====')).toEqual([paragraph(leaf('Title\n====='))]);
  });

  it('decodes escapes and entities', () => {
    expect(markdownToRichText('\\*not italic\\* &amp; &lt;b&gt;')).toEqual([paragraph(leaf('*not italic* & <b>'))]);
  });

  it('returns no nodes for empty Markdown', () => {
    expect(markdownToRichText('')).toEqual([]);
  });
});

describe('plainText', () => {
  it('concatenates the text of all leaves in document order, adding nothing', () => {
    const description = markdownToRichText('# Plan\n\nShip **v2** by *Friday*.\n\n- tests\n- docs\n\n> no ~~delays~~');
    expect(plainText(description)).toBe('PlanShip v2 by Friday.testsdocsno delays');
  });

  it('reads client-supplied nodes too', () => {
    expect(plainText([paragraph(leaf('a'), leaf('b', { bold: true })), node('bulleted-list', item(leaf('c')))])).toBe('abc');
  });

  it('is empty for no nodes', () => {
    expect(plainText([])).toBe('');
  });
});

describe('normaliseDescription', () => {
  it.each([{ input: null }, { input: '' }, { input: '   \n\t\n' }, { input: [] }])('treats $input as no description', ({ input }) => {
    expect(normaliseDescription(input)).toBeNull();
  });

  it('is null for Markdown without text blocks', () => {
    expect(normaliseDescription('---')).toBeNull();
  });

  it('parses a string as Markdown', () => {
    expect(normaliseDescription('**Hi**')).toEqual([paragraph(leaf('Hi', { bold: true }))]);
  });

  it('accepts a node array and normalises its leaves', () => {
    const input = [
      { type: 'paragraph', children: [{ text: 'a', bold: true, italic: false }, { type: 'text', text: 'b', children: [] }] },
      { type: 'callout', children: [{ text: 'c', code: true }] },
    ] as unknown as RichTextNode[];
    expect(normaliseDescription(input)).toEqual([
      paragraph(leaf('a', { bold: true }), leaf('b')),
      node('callout', leaf('c', { code: true })),
    ]);
  });

  it('accepts what it produced from Markdown', () => {
    const description = markdownToRichText('# T\n\n- **a**\n  - b\n\n> `c`');
    expect(normaliseDescription(description)).toEqual(description);
  });

  it.each([
    [[{ type: 'paragraph', children: [{ text: 'a', colour: 'red' }] }], 'description[0].children[0]: Unrecognized key: "colour"'],
    [[{ type: 'paragraph', children: [] }], 'description[0]: a "paragraph" node needs at least one child'],
    [[{ type: 'paragraph' }], 'description[0]: a "paragraph" node needs at least one child'],
    [[{ children: [{ text: 'a' }] }], 'description[0]: a node needs a type (or a text string to be a text node)'],
    [[{ type: 'text', children: [{ text: 'a' }] }], 'description[0]: a node of type "text" needs a text string'],
    [[{ type: 'heading-one', text: 'a' }], 'description[0]: a node with text must have type "text", not "heading-one"'],
    [[{ type: 'p', children: [{ text: 'a', children: [{ text: 'b' }] }] }], 'description[0].children[0]: a text node cannot have children'],
    [[{ type: 'p', bold: true, children: [{ text: 'a' }] }], 'description[0]: only text nodes can carry marks (bold)'],
    [[{ type: 'p', children: [{ text: 5 }] }], 'description[0].children[0].text: Invalid input: expected string, received number'],
    [[{ type: 'p', children: [{ text: 'a', bold: 'yes' }] }], 'description[0].children[0].bold: Invalid input: expected boolean, received string'],
    [[{ type: '', children: [{ text: 'a' }] }], 'description[0].type: Too small: expected string to have >=1 characters'],
    [[{ type: 'x'.repeat(41), children: [{ text: 'a' }] }], 'description[0].type: Too big: expected string to have <=40 characters'],
    [{ type: 'paragraph', children: [{ text: 'a' }] }, 'description: Invalid input: expected array, received object'],
    [
      [null, 1, 'a', [], {}],
      'description[0]: Invalid input: expected object, received null; description[1]: Invalid input: expected object, received number; ' +
        'description[2]: Invalid input: expected object, received string; and 2 more',
    ],
  ])('rejects %j', (input, problems) => {
    expectRichTextError(() => normaliseDescription(input as unknown as RichTextNode[]), `invalid description: ${problems}`);
  });

  it('exports the schema for client node arrays', () => {
    expect(richTextDocumentSchema.parse([{ type: 'paragraph', children: [{ text: 'x' }] }])).toEqual([paragraph(leaf('x'))]);
    expect(richTextDocumentSchema.safeParse([{ type: 'paragraph', children: [] }]).success).toBe(false);
  });
});

describe('node array limits', () => {
  const quotesAround = (levels: number): RichTextNode[] => [nested('block-quote', levels - 1, { text: 'x' } as RichTextNode)];

  it(`accepts nesting ${maxNodeDepth} deep`, () => {
    expect(normaliseDescription(quotesAround(maxNodeDepth))).toEqual([nested('block-quote', maxNodeDepth - 1, leaf('x'))]);
  });

  it('rejects deeper nesting', () => {
    expectRichTextError(() => normaliseDescription(quotesAround(maxNodeDepth + 1)), 'description is nested too deeply (max depth 20)');
  });

  it('rejects 10 000-deep nesting without overflowing the stack', () => {
    expectRichTextError(() => normaliseDescription(quotesAround(10_000)), 'description is nested too deeply (max depth 20)');
  });

  it('accepts 10 000 nodes and rejects more', () => {
    const withLeaves = (count: number): RichTextNode[] => [paragraph(...Array.from({ length: count }, () => leaf('a')))];
    expect(normaliseDescription(withLeaves(9_999))).toEqual(withLeaves(9_999));
    expectRichTextError(() => normaliseDescription(withLeaves(10_000)), 'description has too many nodes (max 10000)');
  });

  it('accepts 100 000 characters of text and rejects more', () => {
    const withText = (length: number): RichTextNode[] => [paragraph(leaf('a'.repeat(length - 1)), leaf('b'))];
    expect(normaliseDescription(withText(100_000))).toEqual(withText(100_000));
    expectRichTextError(() => normaliseDescription(withText(100_001)), 'description text is too long (max 100000 characters)');
  });
});

describe('Markdown bombs', () => {
  it('rejects Markdown longer than 100 000 characters', () => {
    expect(markdownToRichText('a'.repeat(100_000))).toEqual([paragraph(leaf('a'.repeat(100_000)))]);
    expectRichTextError(() => markdownToRichText('a'.repeat(100_001)), 'description is too long (max 100000 characters)');
    expectRichTextError(() => normaliseDescription('a'.repeat(100_001)), 'description is too long (max 100000 characters)');
  });

  it('takes another length limit', () => {
    expectRichTextError(() => markdownToRichText('abcdef', 5), 'description is too long (max 5 characters)');
  });

  it('flattens quotes nested deeper than the node depth limit into the deepest quote', () => {
    expect(markdownToRichText(`${'>'.repeat(25)} deep`)).toEqual([nested('block-quote', 18, paragraph(leaf('deep')))]);
  });

  it('flattens lists nested deeper than the node depth limit into the deepest item', () => {
    const markdown = Array.from({ length: 25 }, (_, level) => `${'  '.repeat(level)}- l${level}`).join('\n');
    const deepestText = Array.from({ length: 17 }, (_, index) => `l${index + 8}`).join('\n');
    let expected: RichTextNode = node('bulleted-list', item(leaf(deepestText)));
    for (let level = 7; level >= 0; level--) expected = node('bulleted-list', item(leaf(`l${level}`), expected));
    expect(markdownToRichText(markdown)).toEqual([expected]);
  });

  it('completes 100 000 nested quote markers within the depth limit', () => {
    const result = markdownToRichText(`${'>'.repeat(99_990)} x`);
    expect(depthOf(result)).toBe(maxNodeDepth);
    expect(plainText(result)).toBe('x');
  });

  it('completes 50 000 list markers on one line within the depth limit', () => {
    const result = markdownToRichText(`${'- '.repeat(49_990)}x`);
    expect(depthOf(result)).toBeLessThanOrEqual(maxNodeDepth);
    expect(plainText(result)).toBe('x');
  });

  it('completes emphasis nested 50 000 deep, keeping it as plain text', () => {
    const markdown = `${'*'.repeat(49_999)}x${'*'.repeat(49_999)}`;
    expect(markdownToRichText(markdown)).toEqual([paragraph(leaf(markdown))]);
  });

  it('keeps a paragraph with too much inline markup as plain text', () => {
    const markdown = '*a **a '.repeat(1_000) + 'b' + ' a** a*'.repeat(1_000);
    expect(markdownToRichText(markdown)).toEqual([paragraph(leaf(markdown))]);
  });

  it('keeps thousands of lazily continued quote lines as plain paragraphs', () => {
    const markdown = '> a\nb\n'.repeat(5_000) + '\nend';
    expect(markdownToRichText(markdown)).toEqual([paragraph(leaf('> a\nb\n'.repeat(5_000).slice(0, -1))), paragraph(leaf('end'))]);
  });

  it('keeps thousands of separate quotes as plain paragraphs', () => {
    const markdown = '> q\n\n'.repeat(4_000);
    const result = markdownToRichText(markdown);
    expect(result).toHaveLength(4_000);
    expect(result[0]).toEqual(paragraph(leaf('> q')));
  });

  it('still parses a long, ordinarily structured description', () => {
    const section = '## Step\n\nDo **this** and *that*.\n\n- one\n- two\n  - detail\n\n> note\n\n';
    const result = markdownToRichText(section.repeat(50));
    expect(result).toHaveLength(200);
    expect(result.slice(0, 4)).toEqual([
      node('heading-two', leaf('Step')),
      paragraph(leaf('Do '), leaf('this', { bold: true }), leaf(' and '), leaf('that', { italic: true }), leaf('.')),
      node('bulleted-list', item(leaf('one')), item(leaf('two'), node('bulleted-list', item(leaf('detail'))))),
      node('block-quote', paragraph(leaf('note'))),
    ]);
  });
});
