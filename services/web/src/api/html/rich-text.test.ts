import { describe, expect, it } from 'vitest';
import { maxRenderDepth, plainTextOf, richText, safeHref } from './rich-text.js';

const text = (value: string, marks: Record<string, boolean> = {}) => ({ type: 'text', text: value, children: [], ...marks });
const el = (type: string, ...children: unknown[]) => ({ type, children });
const render = (nodes: unknown) => richText(nodes).value;

describe('rich text → HTML', () => {
  it('renders headings (below the page’s h1/h2), paragraphs, lists, quotes and code blocks', () => {
    const out = render([
      el('heading-one', text('Goal')),
      el('heading-two', text('Steps')),
      el('heading-three', text('Notes')),
      el('paragraph', text('Plain ')),
      el('bulleted-list', el('list-item', text('a')), el('list-item', text('b'))),
      el('numbered-list', el('list-item', text('one'))),
      el('block-quote', el('paragraph', text('said\nso'))),
      el('code-block', text('if (a < b) {\n  go();\n}')),
    ]);
    expect(out).toBe(
      '<h3>Goal</h3><h4>Steps</h4><h5>Notes</h5><p>Plain </p><ul><li>a</li><li>b</li></ul><ol><li>one</li></ol>' +
        '<blockquote><p>said<br>so</p></blockquote><pre><code>if (a &lt; b) {\n  go();\n}</code></pre>',
    );
  });

  it('renders the marks, nested in a fixed order', () => {
    const out = render([
      el('paragraph', text('b', { bold: true }), text('i', { italic: true }), text('s', { strikethrough: true }), text('c', { code: true }), text('all', { bold: true, italic: true, strikethrough: true })),
    ]);
    expect(out).toBe('<p><strong>b</strong><em>i</em><s>s</s><code>c</code><strong><em><s>all</s></em></strong></p>');
  });

  it('escapes every text: script tags and attributes stay text', () => {
    const out = render([
      el('paragraph', text('<script>alert(1)</script>'), text('"><img src=x onerror=alert(1)>', { code: true })),
      el('code-block', text('</code></pre><script>x</script>')),
    ]);
    expect(out).not.toContain('<script');
    expect(out).not.toContain('<img');
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).toContain('<code>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</code>');
  });

  it('links only http(s) addresses, with rel="noopener noreferrer nofollow"', () => {
    const out = render([
      el('paragraph', text('see https://example.com/a?b=1&c=2. and javascript:alert(1) or http://x.example')),
      { type: 'link', url: 'javascript:alert(1)', children: [text('bad')] },
      { type: 'link', url: 'data:text/html,<script>x</script>', children: [text('data')] },
      { type: 'link', url: 'https://ok.example/"onmouseover="x', children: [text('good')] },
      el('paragraph', text('https://in.code.example', { code: true })),
    ]);
    expect(out).toContain('<a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">https://example.com/a?b=1&amp;c=2</a>.');
    expect(out).toContain('<a href="http://x.example/" rel="noopener noreferrer nofollow">http://x.example</a>');
    expect(out).not.toMatch(/href="(javascript|data):/);
    expect(out).toContain('bad');
    expect(out).toContain('<a href="https://ok.example/%22onmouseover=%22x" rel="noopener noreferrer nofollow">good</a>');
    expect(out).toContain('<code>https://in.code.example</code>');
    expect(safeHref('JAVASCRIPT:alert(1)')).toBeUndefined();
    expect(safeHref(' https://a.example ')).toBe('https://a.example/');
    expect(safeHref('https://user:pw@a.example')).toBeUndefined();
  });

  it('shows an unknown element as its text, and never its type', () => {
    const out = render([el('iframe', text('inside ')), el('paragraph', el('script', text('x')), text('y')), { type: 'img', src: 'x', children: [text('alt')] }]);
    expect(out).toBe('<p>inside </p><p>xy</p><p>alt</p>');
  });

  it('bounds depth: nodes nested deeper than the limit are shown as text, without a stack overflow', () => {
    let deep: unknown = text('bottom');
    for (let level = 0; level < 100_000; level++) deep = el('block-quote', deep);
    const out = render([deep]);
    expect(out.split('<blockquote>').length - 1).toBe(maxRenderDepth);
    expect(out).toContain('<p>bottom</p>');
    expect(plainTextOf(deep)).toBe('bottom');
  });

  it('ignores what is not a node array (malformed JSON, objects, numbers, nulls)', () => {
    expect(render('not json')).toBe('');
    expect(render('{"type":"paragraph"}')).toBe('');
    expect(render(null)).toBe('');
    expect(render([null, 3, 'x', [], { children: 'no' }])).toBe('<p></p>');
    expect(render(JSON.stringify([el('paragraph', text('from JSON'))]))).toBe('<p>from JSON</p>');
  });
});
