import type { FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';
import { HttpError } from './errors.js';

/** A request that does not match its route's schema; the message names each offending field. */
export class RequestValidationError extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}

type Issue = z.core.$ZodIssue;
type RawIssue = z.core.$ZodRawIssue;

const partNames: Record<string, string> = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' };

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Messages for zod's issues in the gateway's words; schema-level messages still take precedence. */
function issueMessage(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'Required' : `expected ${issue.expected}, got ${describeValue(issue.input)}`;
    case 'too_small':
      if (issue.origin === 'string') return issue.minimum === 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`;
      if (issue.origin === 'array') return `must have at least ${issue.minimum} items`;
      return `must be at least ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      if (issue.origin === 'array') return `must have at most ${issue.maximum} items`;
      return `must be at most ${issue.maximum}`;
    case 'unrecognized_keys':
      return 'unknown field';
    case 'invalid_value':
      return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'invalid_format':
      return `must be a valid ${issue.format}`;
    default:
      return undefined;
  }
}

/**
 * For a union ("string, node array or null") report the issues of the alternative that came
 * closest: the one whose type matched, rather than zod's generic "Invalid input".
 */
function flattenUnion(issue: Extract<Issue, { code: 'invalid_union' }>): Issue[] {
  const branches = issue.errors.map((branch) => branch.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] })));
  const typeMatched = branches.filter((branch) => !branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === issue.path.length));
  const [best] = typeMatched;
  if (typeMatched.length === 1 && best) return best.flatMap(expand);
  return [{ ...issue, message: issue.message === 'Invalid input' ? 'has an invalid type' : issue.message }];
}

function expand(issue: Issue): Issue[] {
  if (issue.code === 'invalid_union' && issue.errors.length > 0) return flattenUnion(issue);
  return [issue];
}

/** `body.name: Required; body.extra: unknown field` */
export function formatIssues(part: string, issues: readonly Issue[]): string {
  const where = partNames[part] ?? part;
  const lines = new Set<string>();
  for (const issue of issues.flatMap(expand)) {
    const base = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.add(`${[where, ...base, key].join('.')}: unknown field`);
    } else {
      lines.add(`${[where, ...base].join('.')}: ${issue.message}`);
    }
    if (lines.size >= 10) break;
  }
  return [...lines].join('; ');
}

/**
 * Validates params, query, headers and body with the route's zod schema (and applies its
 * transforms, e.g. trimming). Failures become one 400 `{"error"}` naming every bad field.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    // No body at all (none sent, or an empty one with content-type: application/json) arrives as null.
    if (httpPart === 'body' && (data === null || data === undefined) && !schema.safeParse(undefined).success) {
      return { error: new RequestValidationError('body: Required') };
    }
    const result = z.safeParse(schema, data, { error: issueMessage });
    if (result.success) return { value: result.data };
    return { error: new RequestValidationError(formatIssues(httpPart ?? 'body', result.error.issues)) };
  };
