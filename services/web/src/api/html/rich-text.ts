import { html, SafeHtml } from './escape.js';

/**
 * Rich text (a task's description, a comment's body) as safe HTML. The input is the contract's
 * node array as stored by the tasks service: elements `{type, children}` and leaves `{text}` with
 * the marks `bold`, `italic`, `strikethrough`, `code`. It is read tolerantly (it is data, never
 * trusted): every text goes through the escaper, element types map to a fixed set of tags, an
 * unknown element is shown as its text, nothing deeper than `maxRenderDepth` is rendered as markup,
 * and a link is made only for an http(s) address (`rel="noopener noreferrer nofollow"`).
 *
 * Headings start at `<h3>`: the page's `<h1>` is the task's name and its `<h2>`s are its sections.
 */

/** Deeper nodes are shown as their text (the tasks service stores at most 20 levels). */
export const maxRenderDepth = 24;
/** Nodes rendered as markup at most; the rest of a document is shown as its text. */
export const maxRenderNodes = 20_000;

type Context = 'block' | 'inline';

const blockTags: Readonly<Record<string, string>> = {
  paragraph: 'p',
  'heading-one': 'h3',
  'heading-two': 'h4',
  'heading-three': 'h5',
  'bulleted-list': 'ul',
  'numbered-list': 'ol',
  'list-item': 'li',
  'block-quote': 'blockquote',
};

/** Elements whose children are inline (text and links), not blocks. */
const inlineContent = new Set(['paragraph', 'heading-one', 'heading-two', 'heading-three', 'code-block']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const childrenOf = (node: Record<string, unknown>): unknown[] => (Array.isArray(node.children) ? node.children : []);

/** The text of all leaves below `node`, in order, without recursion (so any depth is safe). */
export function plainTextOf(node: unknown): string {
  const parts: string[] = [];
  const pending: unknown[] = [node];
  for (let item = pending.pop(); pending.length > 0 || item !== undefined; item = pending.pop()) {
    if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index--) pending.push(item[index]);
    } else if (isObject(item)) {
      if (typeof item.text === 'string') parts.push(item.text);
      else pending.push(childrenOf(item));
    }
  }
  return parts.join('');
}

/** An http(s) URL as an absolute href, or undefined for any other scheme (javascript:, data:, …). */
export function safeHref(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) return undefined;
  const url = URL.parse(value.trim());
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') return undefined;
  return url.href;
}

const link = (href: string, content: SafeHtml | string): SafeHtml => html`<a href="${href}" rel="noopener noreferrer nofollow">${content}</a>`;

/** Trailing punctuation is not part of an address written in a sentence ("see https://x.example."). */
const urlPattern = /https?:\/\/[^\s<>"'`]+/g;
function linkified(text: string): SafeHtml {
  const parts: Array<SafeHtml | string> = [];
  let last = 0;
  for (const match of text.matchAll(urlPattern)) {
    const raw = match[0].replace(/[.,;:!?)\]]+$/, '');
    const href = safeHref(raw);
    if (!href) continue;
    parts.push(text.slice(last, match.index), link(href, raw));
    last = match.index + raw.length;
  }
  parts.push(text.slice(last));
  return html`${parts}`;
}

/** Text with its line breaks kept. */
function withBreaks(text: string, autolink: boolean): SafeHtml {
  const lines = text.split('\n');
  return html`${lines.map((line, index) => html`${index > 0 ? html`<br>` : ''}${autolink ? linkified(line) : line}`)}`;
}

function leaf(node: Record<string, unknown>, inCode: boolean): SafeHtml {
  const text = typeof node.text === 'string' ? node.text : '';
  // In a code block, text is kept as written (the <pre> keeps its line breaks).
  if (inCode) return html`${text}`;
  let out: SafeHtml = node.code === true ? html`<code>${text}</code>` : withBreaks(text, true);
  if (node.strikethrough === true) out = html`<s>${out}</s>`;
  if (node.italic === true) out = html`<em>${out}</em>`;
  if (node.bold === true) out = html`<strong>${out}</strong>`;
  return out;
}

class Renderer {
  private budget = maxRenderNodes;

  nodes(nodes: unknown[], context: Context, depth: number, inCode = false): SafeHtml {
    return html`${nodes.map((node) => this.node(node, context, depth, inCode))}`;
  }

  private node(node: unknown, context: Context, depth: number, inCode: boolean): SafeHtml {
    if (!isObject(node)) return html``;
    if (typeof node.text === 'string') return leaf(node, inCode);
    const type = typeof node.type === 'string' ? node.type : '';
    this.budget -= 1;
    // Too deep or too many: the rest is shown as text (never dropped, never markup).
    if (depth >= maxRenderDepth || this.budget < 0) return this.asText(node, context);
    const children = childrenOf(node);
    if (type === 'code-block') return html`<pre><code>${this.nodes(children, 'inline', depth + 1, true)}</code></pre>`;
    if (type === 'link') {
      const content = this.nodes(children, 'inline', depth + 1, inCode);
      const href = safeHref(node.url ?? node.href);
      return href && !inCode ? link(href, content) : content;
    }
    const tag = blockTags[type];
    if (tag === undefined) return this.asText(node, context);
    const inner = this.nodes(children, inlineContent.has(type) ? 'inline' : 'block', depth + 1, inCode);
    // Inside a paragraph or heading a block tag would be invalid HTML: its content only.
    if (context === 'inline') return inner;
    return new SafeHtml(`<${tag}>${inner.value}</${tag}>`);
  }

  private asText(node: Record<string, unknown>, context: Context): SafeHtml {
    const text = plainTextOf(node);
    return context === 'block' ? html`<p>${withBreaks(text, false)}</p>` : withBreaks(text, false);
  }
}

/** A rich-text node array (parsed JSON, or the JSON text) as HTML; anything else renders nothing. */
export function richText(document: unknown): SafeHtml {
  let nodes = document;
  if (typeof nodes === 'string') {
    try {
      nodes = JSON.parse(nodes) as unknown;
    } catch {
      return html``;
    }
  }
  if (!Array.isArray(nodes)) return html``;
  return new Renderer().nodes(nodes, 'block', 0);
}
