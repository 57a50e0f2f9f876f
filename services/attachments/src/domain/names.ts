import { invalid } from '@tws/common';

export const MAX_NAME_LENGTH = 255;

/**
 * Characters removed from file names: C0/C1 controls and DEL, line and paragraph separators,
 * bidirectional overrides and isolates (used to disguise extensions, e.g. "gpj.exe" shown reversed),
 * the byte-order mark, and lone surrogates (not encodable as UTF-8). Joiners (U+200C/U+200D) stay:
 * emoji and several scripts need them.
 */
const removed = /[\p{Cc}\p{Zl}\p{Zp}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\uFEFF]|\p{Cs}/gu;

/** Path separators of any platform become `_`, so a name can never address a directory. */
const separators = /[/\\]/g;

/**
 * The stored form of a client-supplied file name: NFC, without control characters or path
 * separators, trimmed, unicode kept. Throws a 400-kind error when nothing usable is left or the
 * result is longer than 255 characters (code points).
 */
export function sanitiseFileName(raw: string): string {
  const name = raw.normalize('NFC').replace(removed, '').replace(separators, '_').trim();
  if (name.length === 0 || name === '.' || name === '..') {
    throw invalid('name must contain at least one visible character other than "." and ".."');
  }
  if ([...name].length > MAX_NAME_LENGTH) throw invalid(`name must be at most ${MAX_NAME_LENGTH} characters`);
  return name;
}
