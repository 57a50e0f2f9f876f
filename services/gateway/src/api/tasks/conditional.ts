import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { maxEntityTags, noneMatchHolds, parseEntityTags, strongTagsOf, type EntityTagCondition } from '@tws/common';
import { HttpError } from '../../plugins/errors.js';
import { sendRenderedJson } from './rendered-json.js';

/*
 * Conditional requests (RFC 9110 §13) on tasks, projects and sections. GET /v1/tasks/:id is tagged with a SHA-1 of the bytes
 * it sends (entityTagOf): the body already is the rendered JSON, hashing a few KB costs microseconds,
 * and the tag then changes exactly when the bytes do (labels included, which live in other rows than
 * the task's). A task list is tagged with the project's list version (`"l<version>"`): it is known
 * before the (possibly streamed, paged) body, and lets a current client be answered 304 without the
 * list being rendered at all.
 *
 * Projects and sections: one is tagged with its row version as the tasks service gives it
 * (`entityTag`, `"p<version>"` / `"s<version>"`), which it checks If-Match against in the UPDATE that
 * writes; their lists (small, one message) with a hash of the bytes sent, like a task.
 */

/** Longest conditional header read (64 tags of ~30 characters fit easily). */
const maxHeaderLength = 4096;

const conditionHeader = (description: string) => z.string().max(maxHeaderLength).optional().meta({ description });

export const IfNoneMatch = conditionHeader(
  `Entity tags (or \`*\`) of copies you hold, up to ${maxEntityTags}: when one is current the answer is 304 with no body.`,
);
export const IfMatch = conditionHeader(
  `Strong entity tags (or \`*\`) from ETag, up to ${maxEntityTags}: the change applies only if one is still current, else 412 and nothing is written.`,
);

/** The 304 answer as /openapi.json documents it. */
export const NotModified = z.undefined().describe('Not modified: the copy you hold (If-None-Match) is current; no body');

/** A conditional header parsed, undefined when absent; a malformed one is a 400. */
export function conditionOf(header: string | undefined, name: 'if-match' | 'if-none-match'): EntityTagCondition | undefined {
  if (header === undefined) return undefined;
  const condition = parseEntityTags(header);
  if (condition === null) throw new HttpError(400, `headers.${name}: must be * or a list of at most ${maxEntityTags} entity tags`);
  return condition;
}

/**
 * The tags a PATCH's If-Match sends to the tasks service: [] for none or `*` (the task exists, or
 * the answer is 404 anyway); a header of only weak tags can never match strongly, so it is a 412.
 */
export function ifMatchTags(condition: EntityTagCondition | undefined): string[] {
  if (condition === undefined || condition.any) return [];
  const tags = strongTagsOf(condition);
  if (tags.length === 0) throw new HttpError(412, 'If-Match needs a strong entity tag (as ETag gives it)');
  return tags;
}

/** The version a list tag of If-None-Match names (the first such tag), if any. */
export function listVersionOf(condition: EntityTagCondition | undefined): string | undefined {
  if (condition === undefined || condition.any) return undefined;
  for (const { tag } of condition.tags) {
    const version = /^"l(\d{1,18})"$/.exec(tag)?.[1];
    if (version !== undefined) return version;
  }
  return undefined;
}

export const listTagOf = (version: string): string => `"l${version}"`;

/**
 * `value` rendered as the route's serializer would (zod encode, then JSON), for a route that tags
 * the bytes it sends (projects, sections). A value the schema refuses is a bug here: a 500.
 */
export function renderJson<Schema extends z.ZodType>(schema: Schema, value: z.output<Schema>, what: string): Buffer {
  const encoded = z.safeEncode(schema, value);
  if (!encoded.success) throw new Error(`${what} does not match its response schema`, { cause: encoded.error });
  return Buffer.from(JSON.stringify(encoded.data), 'utf8');
}

/** Sends `json` with its ETag, or 304 (the ETag, no body) when If-None-Match names the current tag. */
export function sendTagged(
  reply: FastifyReply,
  tag: string,
  condition: EntityTagCondition | undefined,
  json: Buffer | Readable | null,
  what: string,
): FastifyReply {
  reply.header('etag', tag);
  if (json === null || (condition !== undefined && !noneMatchHolds(condition, tag))) {
    if (json !== null && !Buffer.isBuffer(json)) json.destroy();
    return reply.code(304).send();
  }
  return sendRenderedJson(reply, json, what);
}
