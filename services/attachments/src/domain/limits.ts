import { invalid } from '@tws/common';

/** A mebibyte: the contract's "MB" (DESIGN decisions: 25 MB = 26 214 400 bytes). */
export const MB = 2 ** 20;

export const plans = ['free', 'pro'] as const;
export type Plan = (typeof plans)[number];

/** Largest file a workspace on each plan may upload (contract section 8). */
export const uploadLimitBytes: Readonly<Record<Plan, number>> = { free: 25 * MB, pro: 100 * MB };

/** How long an upload URL stays valid: 7 days, the SigV4 maximum. */
export const UPLOAD_URL_TTL_SECONDS = 7 * 24 * 60 * 60;

/**
 * The tasks service's plan enum as this context sees it; an unknown plan gets the smallest limit.
 */
export function planOf(value: string): Plan {
  return value === 'PLAN_PRO' ? 'pro' : 'free';
}

/** `25 MB (26214400 bytes)` */
export function describeLimit(bytes: number): string {
  return `${bytes / MB} MB (${bytes} bytes)`;
}

/**
 * The declared size as a number: an int64 arrives as a decimal string. Rejects anything that is
 * not a positive integer; the plan limit is checked separately.
 */
export function parseDeclaredSize(raw: string | number): number {
  const text = String(raw).trim();
  if (!/^\d{1,16}$/.test(text)) throw invalid('size must be a positive integer (bytes)');
  const size = Number(text);
  if (!Number.isSafeInteger(size) || size <= 0) throw invalid('size must be a positive integer (bytes)');
  return size;
}

/** Throws a 400-kind error naming the plan's limit when `size` exceeds it. */
export function checkSizeWithinPlan(size: number, plan: Plan): void {
  const limit = uploadLimitBytes[plan];
  if (size > limit) {
    throw invalid(`size ${size} bytes exceeds the ${plan} plan's upload limit of ${describeLimit(limit)}`);
  }
}

// RFC 9110 §5.6.2 token, §5.6.4 quoted-string (visible ASCII only, so it is a safe header value).
const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const quotedString = '"(?:[\\t !#-\\[\\]-~]|\\\\[\\t -~])*"';
const mediaTypePattern = new RegExp(`^(${token})/(${token})((?:[ \\t]*;[ \\t]*${token}=(?:${token}|${quotedString}))*)$`);

/** IANA's registered top-level media types. */
const topLevelTypes = new Set(['application', 'audio', 'example', 'font', 'haptics', 'image', 'message', 'model', 'multipart', 'text', 'video']);

export const MAX_CONTENT_TYPE_LENGTH = 255;

/**
 * Checks that `value` is a MIME type (`type/subtype` with optional `; name=value` parameters, RFC 9110
 * §8.3.1) with a registered top-level type, and returns it unchanged: the upload URL signs it as is,
 * so the client must send exactly the string it declared.
 */
export function validateContentType(value: string): string {
  const match = value.length <= MAX_CONTENT_TYPE_LENGTH ? mediaTypePattern.exec(value) : null;
  if (!match || !topLevelTypes.has(match[1]!.toLowerCase())) {
    throw invalid('contentType must be a valid MIME type such as "image/png" or "text/plain; charset=utf-8"');
  }
  return value;
}
