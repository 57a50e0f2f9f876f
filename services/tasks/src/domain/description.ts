import { invalid } from '@tws/common';
import { normaliseDescription, renderedDescription, RichTextError, type RichTextNode } from './rich-text/index.js';
import type { RichTextNodes } from './model.js';

/** A description change as the API sends it. */
export type DescriptionInput = { markdown: string } | { nodesJson: string } | { clear: true };

/**
 * JSON round trip: what jsonb will give back, so stored and new values compare equal; refused when
 * its JSON is over the rendered-size cap.
 */
const plain = (nodes: RichTextNode[]): RichTextNodes => JSON.parse(converted(() => renderedDescription(nodes))) as RichTextNodes;

/** Runs a rich-text conversion, turning its RichTextError into INVALID_ARGUMENT. */
function converted<T>(convert: () => T): T {
  try {
    return convert();
  } catch (error) {
    if (error instanceof RichTextError) throw invalid(error.message);
    throw error;
  }
}

/**
 * The stored form of a description change: a rich-text node array, or null when cleared or empty
 * (an empty string, blank markdown or an empty array).
 */
export function resolveDescription(input: DescriptionInput): RichTextNodes | null {
  if ('clear' in input) return null;
  let nodes: RichTextNode[] | null;
  if ('markdown' in input) {
    nodes = converted(() => normaliseDescription(input.markdown));
  } else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.nodesJson);
    } catch {
      throw invalid('description is not valid JSON');
    }
    if (!Array.isArray(parsed)) throw invalid('description must be a markdown string, a rich-text node array or null');
    // normaliseDescription validates a node array at run time (limits first, then the schema).
    nodes = converted(() => normaliseDescription(parsed as RichTextNode[]));
  }
  return nodes === null ? null : plain(nodes);
}

/** A comment body: markdown (blank lines separate blocks) as a rich-text node array. */
export function commentBody(text: string): RichTextNodes {
  const nodes = converted(() => normaliseDescription(text));
  if (nodes === null) throw invalid('text must not be empty');
  return plain(nodes);
}
