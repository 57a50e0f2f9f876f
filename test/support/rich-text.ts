import { expect } from 'vitest';
import type { RichTextNode } from './fixtures.js';

/** The cap on a description's rich-text JSON (compact), as the 400 states it. */
export const maxRenderedBytes = 1024 * 1024;

/** Leaves with every mark: 9 999 of them fill the node limit; about 94 bytes of JSON each once normalised. */
function markedLeaves(count: number): RichTextNode[] {
  return Array.from({ length: count }, () => ({ text: 'a', bold: true, italic: true, strikethrough: true, code: true }));
}

/** The compact JSON the tasks service measures: leaves normalised to type, text, marks, children. */
function normalisedBytes(description: RichTextNode[]): number {
  const normalise = (node: RichTextNode): unknown =>
    typeof node.text === 'string'
      ? { type: 'text', text: node.text, bold: true, italic: true, strikethrough: true, code: true, children: [] }
      : { type: node.type, children: (node.children ?? []).map(normalise) };
  return Buffer.byteLength(JSON.stringify(description.map(normalise)));
}

/** A node-array description whose rich-text JSON is exactly `bytes` long (padding its first leaf with 3-byte characters). */
export function descriptionOfBytes(bytes: number): RichTextNode[] {
  const leaves = markedLeaves(9_999);
  const description: RichTextNode[] = [{ type: 'paragraph', children: leaves }];
  const missing = bytes - normalisedBytes(description);
  leaves[0]!.text = 'a' + '€'.repeat(Math.floor(missing / 3)) + 'a'.repeat(missing % 3);
  expect(normalisedBytes(description)).toBe(bytes);
  return description;
}
