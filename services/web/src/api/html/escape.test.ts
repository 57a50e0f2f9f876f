import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from './escape.js';

describe('html', () => {
  it('escapes every interpolated text, in content and in attributes', () => {
    const name = `<script>alert("x")</script>' onmouseover='steal()`;
    const out = html`<a title="${name}">${name}</a>`.toString();
    expect(out).toBe(
      '<a title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;steal()">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;steal()</a>',
    );
  });

  it('keeps nested templates as markup and joins lists; nothing for null, undefined and false', () => {
    const items = ['a&b', 'c'].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.toString()).toBe('<ul><li>a&amp;b</li><li>c</li></ul>0');
  });

  it('escapes &, <, >, quotes and backticks', () => {
    expect(escapeHtml('&<>"\'`')).toBe('&amp;&lt;&gt;&quot;&#39;&#96;');
  });
});
