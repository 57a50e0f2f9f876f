import { fromMarkdown, type Options as ParseOptions } from 'mdast-util-from-markdown';
import { gfmStrikethroughFromMarkdown } from 'mdast-util-gfm-strikethrough';
import { gfmStrikethrough } from 'micromark-extension-gfm-strikethrough';
import {
  element,
  checkNodeCount,
  isLeaf,
  marks,
  maxNodeDepth,
  nulMessage,
  RichTextError,
  textLeaf,
  type KnownElementType,
  type Marks,
  type RichTextElement,
  type RichTextLeaf,
  type RichTextNode,
} from './nodes.js';

type MdastRoot = ReturnType<typeof fromMarkdown>;
type MdastNode = MdastRoot['children'][number];
type MdastOf<Type extends MdastNode['type']> = Extract<MdastNode, { type: Type }>;
type MdastPhrasing = MdastOf<'paragraph'>['children'][number];
type MdastTextBlock = MdastOf<'paragraph' | 'heading' | 'code' | 'html'>;

export const maxMarkdownLength = 100_000;

/*
 * micromark is not linear-time: on hostile input under the length cap, some constructs take time that
 * grows with the square (or worse) of their number, up to minutes at 100 000 characters. The work is
 * estimated from the text in one linear pass; beyond the budgets below, the Markdown is not parsed but
 * kept as plain paragraphs (its markers stay as typed).
 */

/** Containers (`>`, `-`, `1.`) opened on one line: markers beyond this many are dropped. */
const maxContainersPerLine = maxNodeDepth;
const containerMarker = /[ \t]*(?:>|(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$))/y;
const containerPrefix = /^(?:[ \t]*(?:>|(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$)))*[ \t]*/;
const blankLine = /^[ \t]*$/;
const lineEnding = /\r\n|\r|\n/;

/** Sum over blank-line separated chunks of the square of their inline markup characters. */
const maxInlineMarkupCost = 10_000_000;
const inlineMarkupCharacters = new Set(['*', '_', '~', '`', '[', ']', '(', ')', '<', '!', '&', '\\']);

/**
 * A line that does not continue every open container (it closes some, or continues a paragraph
 * lazily) costs time proportional to the document before it: the budget is the sum of their offsets.
 */
const maxContainerExitCost = 10_000_000;

/*
 * micromark's memory is not bounded by the length cap either: it holds a token (and mdast a node with
 * positions) for each line and marker, so a 100 KB document of 25 000 one-character headings, list
 * items or paragraphs takes 230-450 MB of heap. Measured peak heap per line (over an 11 MB process):
 * a list item ~13 KB, a heading ~6 KB, a plain or blank line ~2 KB. The line budget keeps one parse
 * under ~30 MB; a document over it is refused before it is parsed.
 */
export const maxMarkdownLineCost = 10_000;
/** What a line that starts with a block marker (`#`, `>`, `-`, `+`, `*`, `1.`, `1)`) counts for. */
export const markerLineCost = 5;
const blockMarkerStart = /^[ \t]*(?:#{1,6}(?:[ \t]|$)|>|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))/;

const parseOptions: ParseOptions = {
  extensions: [
    gfmStrikethrough({ singleTilde: false }),
    // Setext headings (`Title` over `===`) are not in the contract, and each costs time proportional
    // to the document before it.
    { disable: { null: ['setextUnderline'] } },
  ],
  mdastExtensions: [gfmStrikethroughFromMarkdown()],
};

const headingTypes = ['heading-one', 'heading-two', 'heading-three'] as const;

/** Parses the contract's Markdown subset into rich-text elements (nested no deeper than `maxNodeDepth`). */
export function markdownToRichText(markdown: string, maxLength = maxMarkdownLength): RichTextElement[] {
  if (markdown.length > maxLength) throw new RichTextError(`description is too long (max ${maxLength} characters)`);
  if (markdown.includes('\0')) throw new RichTextError(`description ${nulMessage}`);
  const lines = markdown.split(lineEnding);
  const cappedLines = lines.map(capContainers);
  if (isCostlyToParse(cappedLines)) return checkNodeCount(plainParagraphs(lines));
  if (lineCost(lines) > maxMarkdownLineCost) {
    throw new RichTextError(
      `description has too many lines to parse (max ${maxMarkdownLineCost}, a line starting with a heading, list or quote marker counting as ${markerLineCost})`,
    );
  }
  return checkNodeCount(mapBlocks(fromMarkdown(cappedLines.join('\n'), parseOptions).children, 1));
}

function lineCost(lines: readonly string[]): number {
  let cost = 0;
  for (const line of lines) cost += blockMarkerStart.test(line) ? markerLineCost : 1;
  return cost;
}

/** Blank-line separated paragraphs of unparsed text. */
function plainParagraphs(lines: readonly string[]): RichTextElement[] {
  const paragraphs: RichTextElement[] = [];
  let paragraphLines: string[] = [];
  for (const line of [...lines, '']) {
    if (!blankLine.test(line)) {
      paragraphLines.push(line);
    } else if (paragraphLines.length > 0) {
      paragraphs.push(element('paragraph', [textLeaf(paragraphLines.join('\n'))]));
      paragraphLines = [];
    }
  }
  return paragraphs;
}

/** Drops the container markers of a line beyond the first `maxContainersPerLine`, keeping its content. */
function capContainers(line: string): string {
  let count = 0;
  let keptEnd = 0;
  let end = 0;
  containerMarker.lastIndex = 0;
  while (containerMarker.exec(line) !== null) {
    count += 1;
    end = containerMarker.lastIndex;
    if (count === maxContainersPerLine) keptEnd = end;
  }
  return count > maxContainersPerLine ? line.slice(0, keptEnd) + line.slice(end) : line;
}

function isCostlyToParse(lines: readonly string[]): boolean {
  let inlineMarkupCost = 0;
  let containerExitCost = 0;
  let paragraphMarkup = 0;
  let offset = 0;
  let afterBlank = false;
  let previous: LinePrefix | undefined;
  let lastMarker: LinePrefix | undefined;
  for (const line of lines) {
    if (blankLine.test(line)) {
      inlineMarkupCost += paragraphMarkup * paragraphMarkup;
      paragraphMarkup = 0;
      lastMarker = undefined;
      afterBlank = true;
    } else {
      const prefix = linePrefix(line);
      if (previous !== undefined && exitsContainers(prefix, previous, lastMarker, afterBlank)) containerExitCost += offset;
      if (prefix.hasMarker) lastMarker = prefix;
      paragraphMarkup += countInlineMarkup(line);
      previous = prefix;
      afterBlank = false;
    }
    offset += line.length + 1;
  }
  inlineMarkupCost += paragraphMarkup * paragraphMarkup;
  return inlineMarkupCost > maxInlineMarkupCost || containerExitCost > maxContainerExitCost;
}

interface LinePrefix {
  /** Characters of container markers and indentation. */
  width: number;
  quotes: number;
  hasMarker: boolean;
}

function linePrefix(line: string): LinePrefix {
  const prefix = containerPrefix.exec(line)?.[0] ?? '';
  let quotes = 0;
  for (const character of prefix) if (character === '>') quotes += 1;
  return { width: prefix.length, quotes, hasMarker: prefix.trim() !== '' };
}

/** Whether a line may leave containers that the lines before it opened (an over-estimate). */
function exitsContainers(line: LinePrefix, previous: LinePrefix, lastMarker: LinePrefix | undefined, afterBlank: boolean): boolean {
  if (afterBlank) return previous.width > 0;
  return isShallower(line, previous) || (lastMarker !== undefined && isShallower(line, lastMarker));
}

function isShallower(line: LinePrefix, than: LinePrefix): boolean {
  return line.quotes < than.quotes || line.width < than.width;
}

function countInlineMarkup(text: string): number {
  let count = 0;
  for (const character of text) if (inlineMarkupCharacters.has(character)) count += 1;
  return count;
}

function mapBlocks(blocks: readonly MdastNode[], depth: number): RichTextElement[] {
  return blocks.flatMap((block) => mapBlock(block, depth));
}

/** A paragraph, heading or code block at `depth` holds leaves at depth + 1. */
function textBlockFits(depth: number): boolean {
  return depth + 1 <= maxNodeDepth;
}

/** A container (quote or list) at `depth` holds blocks or items at depth + 1 and their leaves at depth + 2. */
function containerFits(depth: number): boolean {
  return depth + 2 <= maxNodeDepth;
}

function mapBlock(block: MdastNode, depth: number): RichTextElement[] {
  switch (block.type) {
    case 'paragraph':
    case 'heading':
    case 'code':
    case 'html':
      return [mapTextBlock(block)];
    case 'blockquote': {
      if (!containerFits(depth)) return collectTextBlocks(block).map(mapTextBlock);
      const children = mapBlocks(block.children, depth + 1);
      return [element('block-quote', children.length > 0 ? children : [element('paragraph', [])])];
    }
    case 'list': {
      if (!containerFits(depth)) return collectTextBlocks(block).map(mapTextBlock);
      const items = block.children.map((item) => mapListItem(item, depth + 1));
      return [element(block.ordered === true ? 'numbered-list' : 'bulleted-list', items)];
    }
    default:
      // Thematic breaks and link definitions have no text; nothing else is parsed.
      return [];
  }
}

function mapTextBlock(block: MdastTextBlock): RichTextElement {
  switch (block.type) {
    case 'paragraph':
      return element('paragraph', mapInline(block.children));
    case 'heading':
      return element(headingType(block.depth), mapInline(block.children));
    case 'code':
      return element('code-block', [textLeaf(block.value)]);
    case 'html':
      return element('paragraph', [textLeaf(block.value)]);
  }
}

function headingType(level: number): KnownElementType {
  return headingTypes[Math.min(level, headingTypes.length) - 1] ?? 'heading-three';
}

/**
 * A list item holds the leaves of its paragraphs (a line break between two paragraphs) and its nested
 * lists and quotes as elements; those that would nest too deeply are flattened into its leaves.
 */
function mapListItem(item: MdastOf<'listItem'>, depth: number): RichTextElement {
  const children: RichTextNode[] = [];
  const appendLeaves = (leaves: RichTextLeaf[]): void => {
    const last = children.at(-1);
    if (last !== undefined && isLeaf(last)) children.push(textLeaf('\n'));
    for (const leaf of leaves) children.push(leaf);
  };
  for (const child of item.children) {
    if (child.type === 'paragraph' || child.type === 'heading' || child.type === 'html') {
      appendLeaves(inlineLeaves(child));
    } else if (child.type === 'code' && textBlockFits(depth + 1)) {
      children.push(mapTextBlock(child));
    } else if ((child.type === 'list' || child.type === 'blockquote') && containerFits(depth + 1)) {
      for (const nested of mapBlock(child, depth + 1)) children.push(nested);
    } else {
      for (const block of collectTextBlocks(child)) appendLeaves(inlineLeaves(block));
    }
  }
  return element('list-item', mergeAdjacentLeaves(children));
}

function inlineLeaves(block: MdastTextBlock): RichTextLeaf[] {
  return block.type === 'paragraph' || block.type === 'heading' ? mapInline(block.children) : [textLeaf(block.value)];
}

/** The text blocks inside a container, in document order, however deeply nested. */
function collectTextBlocks(container: MdastNode): MdastTextBlock[] {
  const found: MdastTextBlock[] = [];
  const pending: MdastNode[] = [container];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (node.type === 'paragraph' || node.type === 'heading' || node.type === 'code' || node.type === 'html') {
      found.push(node);
    } else if (node.type === 'blockquote' || node.type === 'list' || node.type === 'listItem') {
      for (let index = node.children.length - 1; index >= 0; index--) pending.push(node.children[index]!);
    }
  }
  return found;
}

/** Phrasing content to leaves; nested formatting accumulates marks (iteratively: nesting is unbounded). */
function mapInline(phrasing: readonly MdastPhrasing[]): RichTextLeaf[] {
  const leaves: RichTextLeaf[] = [];
  const pending: Array<{ node: MdastPhrasing; marks: Marks }> = [];
  const pushChildren = (children: readonly MdastPhrasing[], childMarks: Marks): void => {
    for (let index = children.length - 1; index >= 0; index--) pending.push({ node: children[index]!, marks: childMarks });
  };
  pushChildren(phrasing, {});
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, marks: nodeMarks } = next;
    switch (node.type) {
      case 'text':
      case 'html':
        leaves.push(textLeaf(node.value, nodeMarks));
        break;
      case 'inlineCode':
        leaves.push(textLeaf(node.value, { ...nodeMarks, code: true }));
        break;
      case 'break':
        leaves.push(textLeaf('\n', nodeMarks));
        break;
      case 'image':
      case 'imageReference':
        leaves.push(textLeaf(node.alt ?? '', nodeMarks));
        break;
      case 'strong':
        pushChildren(node.children, { ...nodeMarks, bold: true });
        break;
      case 'emphasis':
        pushChildren(node.children, { ...nodeMarks, italic: true });
        break;
      case 'delete':
        pushChildren(node.children, { ...nodeMarks, strikethrough: true });
        break;
      case 'link':
      case 'linkReference':
        pushChildren(node.children, nodeMarks);
        break;
      default:
        break;
    }
  }
  return mergeAdjacentLeaves(leaves).filter((leaf) => leaf.text !== '');
}

function mergeAdjacentLeaves<Node extends RichTextNode>(nodes: readonly Node[]): Node[] {
  const merged: Node[] = [];
  for (const node of nodes) {
    const previous = merged.at(-1);
    if (previous !== undefined && isLeaf(previous) && isLeaf(node) && sameMarks(previous, node)) {
      merged[merged.length - 1] = { ...previous, text: previous.text + node.text };
    } else {
      merged.push(node);
    }
  }
  return merged;
}

function sameMarks(left: Marks, right: Marks): boolean {
  return marks.every((mark) => left[mark] === right[mark]);
}
