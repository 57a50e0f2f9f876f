import { z } from 'zod';
import { isUuid } from '@tws/common';
import { HttpError } from '../../plugins/errors.js';

/*
 * Ids are UUIDs (any version, canonical 8-4-4-4-12 hex form, `isUuid` of @tws/common). Checked in
 * the gateway so a malformed id never reaches Postgres: in a path it answers 404, in a body 400.
 */

/** How /openapi.json states the id format (a JSON Schema pattern has no flags); the check is `isUuid`. */
const documentedUuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** An id in the URL path: any non-empty string; the handler answers 404 unless it is a UUID. */
export const PathId = z.string().min(1).meta({ format: 'uuid', description: 'Resource id (UUID).' });

/** An id in a request body: must be a UUID (400 otherwise). */
export const BodyId = z
  .string()
  .refine(isUuid, { error: 'must be a valid id (UUID)' })
  .meta({ pattern: documentedUuidPattern, format: 'uuid' });

export const nameMaxLength = 255;
export const textMaxLength = 100_000;

/** A display name: not blank, at most 255 characters; stored verbatim (no trimming). */
export const Name = z
  .string()
  .max(nameMaxLength, { error: `must be at most ${nameMaxLength} characters` })
  .refine((name) => name.trim().length > 0, { error: 'must not be empty' })
  .meta({ minLength: 1 });

/** Timestamps are passed through as the tasks service formats them: ISO 8601 UTC with milliseconds. */
export const Timestamp = z.string().meta({ format: 'date-time', examples: ['2026-11-22T09:30:00.000Z'] });

/** Every error the API returns. */
export const ErrorBody = z
  .object({ error: z.string().meta({ description: 'Human-readable message; names the field for validation errors.' }) })
  .meta({ id: 'Error', description: 'Error response', examples: [{ error: 'body.name: Required' }] });

const errorDescriptions = {
  400: 'Invalid request: a missing or invalid field, malformed JSON',
  401: 'Missing or invalid API key or Bearer token',
  403: 'Not allowed: read-only token scope, not a workspace member, or a plan limit reached',
  404: 'Resource not found',
  413: 'Request body too large',
  415: 'Request body is not application/json',
  412: 'If-Match names no current entity tag: the resource changed since it was read (nothing was written)',
  429: 'Rate limit exceeded; see the Retry-After header',
} as const;
type ErrorStatus = keyof typeof errorDescriptions;

/** The documented error responses of a route, all `{"error": string}`. */
export function errorResponses(...statuses: ErrorStatus[]): Record<ErrorStatus, typeof ErrorBody> {
  const responses: Partial<Record<ErrorStatus, typeof ErrorBody>> = {};
  for (const status of statuses) responses[status] = ErrorBody.describe(errorDescriptions[status]);
  return responses as Record<ErrorStatus, typeof ErrorBody>;
}

/** Errors every /v1 route can answer, and those of routes that take a JSON body. */
export const readErrors = [401, 403, 404, 429] as const;
export const writeErrors = [400, 401, 403, 404, 413, 415, 429] as const;

/** A 204 reply with no body. */
export const NoContent = z.undefined().describe('Done; no body');

/**
 * One node of a rich-text description: `type`, `children` for containers, `text` for leaves.
 * Other attributes the editor keeps (marks, levels, …) pass through unchanged.
 */
export const RichTextNode = z
  .looseObject({
    type: z.string().optional(),
    text: z.string().optional(),
    get children() {
      return z.array(RichTextNode).optional();
    },
  })
  .meta({ id: 'RichTextNode', description: 'Rich-text node: leaves carry `text`, containers carry `children`.' });
export type RichTextNode = z.infer<typeof RichTextNode>;

export const RichText = z
  .array(RichTextNode)
  .nullable()
  .meta({ description: 'Rich-text node array, or null when the description is empty.' });

/** A path id that cannot exist (not a UUID) is simply not found. */
export function assertPathId(id: string, what: string): void {
  if (!isUuid(id)) throw new HttpError(404, `${what} not found`);
}

/** PATCH bodies: at least one field. */
export const atLeastOneField = {
  check: (body: object): boolean => Object.keys(body).length > 0,
  message: 'at least one field is required',
} as const;
