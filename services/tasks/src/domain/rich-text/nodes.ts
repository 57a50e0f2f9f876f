import { z } from 'zod';

/**
 * The API's rich-text description: an array of nodes, each with `type` and `children`; leaves carry
 * `text` (and no children). Plain text is the concatenation of the leaves' `text`.
 */

export type Mark = 'bold' | 'italic' | 'strikethrough' | 'code';
export const marks: readonly Mark[] = ['bold', 'italic', 'strikethrough', 'code'];

/** Marks are present only when true. */
export type Marks = { [mark in Mark]?: true };

export type RichTextLeaf = Marks & {
  type: 'text';
  text: string;
  children: [];
};

/** The element types produced from Markdown; clients may send other types (any 1..40 character name but `text`). */
export type KnownElementType =
  | 'paragraph'
  | 'heading-one'
  | 'heading-two'
  | 'heading-three'
  | 'bulleted-list'
  | 'numbered-list'
  | 'list-item'
  | 'block-quote'
  | 'code-block';

export interface RichTextElement {
  type: string;
  /** Never empty. */
  children: RichTextNode[];
}

export type RichTextNode = RichTextElement | RichTextLeaf;
export type RichTextDocument = RichTextNode[];

export const maxNodeDepth = 20;
export const maxNodeCount = 10_000;
export const maxTextLength = 100_000;
/**
 * Bytes of a description's (or comment's) rich-text JSON, written compactly. Markdown expands ~19x
 * into JSON; the cap bounds every stored description, so a task list grows by at most this much per task.
 */
export const maxRenderedBytes = 1024 * 1024;

export class RichTextError extends Error {
  override name = 'RichTextError';
}

export function isLeaf(node: RichTextNode): node is RichTextLeaf {
  return 'text' in node;
}

/** Marks are set in a fixed order, so that equal leaves serialise alike. */
export function textLeaf(text: string, leafMarks: Marks = {}): RichTextLeaf {
  const orderedMarks: Marks = {};
  for (const mark of marks) if (leafMarks[mark] === true) orderedMarks[mark] = true;
  return { type: 'text', text, ...orderedMarks, children: [] };
}

export function element(type: KnownElementType, children: RichTextNode[]): RichTextElement {
  return { type, children: children.length > 0 ? children : [textLeaf('')] };
}

/** The `text` of all leaves in document order, nothing added between them. */
export function plainText(nodes: readonly RichTextNode[]): string {
  const parts: string[] = [];
  const pending: RichTextNode[] = [...nodes].reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (isLeaf(node)) parts.push(node.text);
    else for (let index = node.children.length - 1; index >= 0; index--) pending.push(node.children[index]!);
  }
  return parts.join('');
}

/** What clients may send: leaves may omit `type` and `children`, and marks may be false. */
export interface RichTextNodeInput {
  type?: string | undefined;
  text?: string | undefined;
  children?: RichTextNodeInput[] | undefined;
  bold?: boolean | undefined;
  italic?: boolean | undefined;
  strikethrough?: boolean | undefined;
  code?: boolean | undefined;
}

type ParsedNodeObject = Omit<RichTextNodeInput, 'children'> & { children?: RichTextNode[] | undefined };

const markFlag = z.boolean().optional();

/** Postgres text and jsonb cannot hold U+0000: refused with a 400 rather than failing the write. */
export const nulMessage = 'must not contain the NUL character (U+0000)';
const withoutNul = z.string().refine((value) => !value.includes('\0'), { error: nulMessage });

// One object shape for leaves and elements, told apart by `text`: a union would report the issues of
// both alternatives, where this reports the one that applies.
const nodeObjectSchema = z.strictObject({
  type: withoutNul.min(1).max(40).optional(),
  text: withoutNul.optional(),
  children: z.array(z.lazy(() => richTextNodeSchema)).optional(),
  bold: markFlag,
  italic: markFlag,
  strikethrough: markFlag,
  code: markFlag,
});

export const richTextNodeSchema: z.ZodType<RichTextNode, RichTextNodeInput> = nodeObjectSchema.transform((node, ctx) => {
  const problem = node.text === undefined ? elementProblem(node) : leafProblem(node);
  if (problem !== undefined) {
    ctx.issues.push({ code: 'custom', message: problem, input: node });
    return z.NEVER;
  }
  return toRichTextNode(node);
});

/** Validates a client-supplied node array (after `checkDocumentLimits`) and normalises its leaves. */
export const richTextDocumentSchema = z.array(richTextNodeSchema);

function leafProblem(node: ParsedNodeObject): string | undefined {
  if (node.type !== undefined && node.type !== 'text') return `a node with text must have type "text", not "${node.type}"`;
  if (node.children !== undefined && node.children.length > 0) return 'a text node cannot have children';
  return undefined;
}

function elementProblem(node: ParsedNodeObject): string | undefined {
  if (node.type === undefined) return 'a node needs a type (or a text string to be a text node)';
  if (node.type === 'text') return 'a node of type "text" needs a text string';
  if (node.children === undefined || node.children.length === 0) return `a "${node.type}" node needs at least one child`;
  const markedWith = marks.filter((mark) => node[mark] !== undefined);
  if (markedWith.length > 0) return `only text nodes can carry marks (${markedWith.join(', ')})`;
  return undefined;
}

function toRichTextNode(node: ParsedNodeObject): RichTextNode {
  if (node.text !== undefined) {
    const leafMarks: Marks = {};
    for (const mark of marks) if (node[mark] === true) leafMarks[mark] = true;
    return textLeaf(node.text, leafMarks);
  }
  return { type: node.type ?? '', children: node.children ?? [] };
}

/** Refuses a converted document of more than `maxNodeCount` nodes (Markdown is bounded like node arrays). */
export function checkNodeCount<Nodes extends readonly RichTextNode[]>(nodes: Nodes): Nodes {
  let count = 0;
  const pending: RichTextNode[][] = [[...nodes]];
  for (let level = pending.pop(); level !== undefined; level = pending.pop()) {
    count += level.length;
    if (count > maxNodeCount) throw new RichTextError(`description has too many nodes (max ${maxNodeCount})`);
    for (const node of level) if (!isLeaf(node) && node.children.length > 0) pending.push(node.children);
  }
  return nodes;
}

/**
 * Depth, node count and text size of an unvalidated node array, checked without recursion so that a
 * hostile, deeply nested array is refused before the (recursive) schema sees it.
 */
export function checkDocumentLimits(input: unknown): void {
  if (!Array.isArray(input)) return;
  const pending: Array<{ items: unknown[]; depth: number }> = [{ items: input, depth: 1 }];
  let nodeCount = 0;
  let textLength = 0;
  for (let level = pending.pop(); level !== undefined; level = pending.pop()) {
    if (level.items.length === 0) continue;
    nodeCount += level.items.length;
    if (nodeCount > maxNodeCount) throw new RichTextError(`description has too many nodes (max ${maxNodeCount})`);
    if (level.depth > maxNodeDepth) throw new RichTextError(`description is nested too deeply (max depth ${maxNodeDepth})`);
    for (const item of level.items) {
      if (typeof item !== 'object' || item === null) continue;
      if ('text' in item && typeof item.text === 'string') {
        textLength += item.text.length;
        if (textLength > maxTextLength) throw new RichTextError(`description text is too long (max ${maxTextLength} characters)`);
      }
      if ('children' in item && Array.isArray(item.children)) pending.push({ items: item.children, depth: level.depth + 1 });
    }
  }
}
