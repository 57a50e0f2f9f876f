import type { z } from 'zod';
import { markdownToRichText } from './markdown.js';
import { checkDocumentLimits, maxRenderedBytes, richTextDocumentSchema, RichTextError, type RichTextNode } from './nodes.js';

export { markdownToRichText, markerLineCost, maxMarkdownLength, maxMarkdownLineCost } from './markdown.js';
export {
  checkDocumentLimits,
  checkNodeCount,
  isLeaf,
  maxNodeCount,
  maxNodeDepth,
  maxRenderedBytes,
  maxTextLength,
  nulMessage,
  plainText,
  richTextDocumentSchema,
  richTextNodeSchema,
  RichTextError,
  type KnownElementType,
  type Mark,
  type Marks,
  type RichTextDocument,
  type RichTextElement,
  type RichTextLeaf,
  type RichTextNode,
  type RichTextNodeInput,
} from './nodes.js';

/**
 * A task description as stored: Markdown is parsed, a node array is validated (leaves normalised to
 * carry `type: 'text'` and `children: []`); blank Markdown, an empty array or null mean no description.
 */
export function normaliseDescription(input: string | RichTextNode[] | null): RichTextNode[] | null {
  if (input === null || (typeof input === 'string' && input.trim() === '')) return null;
  const nodes = typeof input === 'string' ? markdownToRichText(input) : validateNodes(input);
  return nodes.length > 0 ? nodes : null;
}

/** The compact JSON of a normalised description, refused beyond `maxRenderedBytes`. */
export function renderedDescription(nodes: readonly RichTextNode[]): string {
  const json = JSON.stringify(nodes);
  // UTF-8 takes at most 3 bytes per UTF-16 unit: the exact count is needed only near the cap.
  const bytes = json.length * 3 <= maxRenderedBytes ? json.length : Buffer.byteLength(json);
  if (bytes > maxRenderedBytes) {
    throw new RichTextError(`description is too large: ${bytes} bytes as rich-text JSON (max ${maxRenderedBytes})`);
  }
  return json;
}

function validateNodes(input: unknown): RichTextNode[] {
  checkDocumentLimits(input);
  const result = richTextDocumentSchema.safeParse(input);
  if (!result.success) throw new RichTextError(`invalid description: ${describeIssues(result.error.issues)}`);
  return result.data;
}

const maxIssuesReported = 3;

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const described = issues.slice(0, maxIssuesReported).map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  if (issues.length > maxIssuesReported) described.push(`and ${issues.length - maxIssuesReported} more`);
  return described.join('; ');
}

/** `[0].children[2].text`, as a client would index the description. */
function formatPath(path: readonly PropertyKey[]): string {
  const formatted = path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  return formatted === '' ? 'description' : `description${formatted}`;
}
