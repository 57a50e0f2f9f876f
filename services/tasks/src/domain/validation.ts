import { invalid, notFound } from '@tws/common';
import { isUuid } from './identifiers.js';

/** A required, non-blank text field of at most `max` characters. */
export function requiredText(value: string | undefined, field: string, max = 500): string {
  if (value === undefined || value.trim() === '') throw invalid(`${field} is required`);
  if (value.length > max) throw invalid(`${field} must be at most ${max} characters`);
  return value;
}

/** An id in a path (or the workspace the caller acts in): not a UUID = no such resource. */
export function pathId(value: string | undefined, what: string): string {
  if (!isUuid(value)) throw notFound(`${what} not found`);
  return value.toLowerCase();
}

/** An id in a request body that names something the task refers to: not a UUID = invalid. */
export function referenceId(value: string, field: string, problem: string): string {
  if (!isUuid(value)) throw invalid(`${field} ${problem}`);
  return value.toLowerCase();
}

/** Most If-Match tags taken, and the longest (the gateway bounds the header tighter). */
const maxIfMatchTags = 64;
const maxTagLength = 256;

/** The If-Match tags of a conditional write, bounded in count and length ([]: no condition). */
export function ifMatchTags(tags: readonly string[] | undefined): readonly string[] {
  const list = tags ?? [];
  if (list.length > maxIfMatchTags || list.some((tag) => tag.length > maxTagLength)) {
    throw invalid(`ifMatch takes at most ${maxIfMatchTags} tags of at most ${maxTagLength} characters`);
  }
  return list;
}
