/*
 * Entity tags of projects and sections (RFC 9110 §8.8.3). What the API shows of one is a single row,
 * and every change of that row bumps its `version` (migration 012), so the version is a strong
 * validator: `"p<version>"` for a project, `"s<version>"` for a section. The tasks service alone
 * makes and reads these tags; the gateway passes them through (ETag, If-Match) untouched.
 */

export type RowKind = 'project' | 'section';

const prefixOf: Record<RowKind, string> = { project: 'p', section: 's' };

/** Versions are positive bigints; more digits than a bigint holds name no row. */
const maxVersionDigits = 18;

/** The strong entity tag of a row at `version` (a decimal string). */
export function rowTagOf(kind: RowKind, version: string): string {
  return `"${prefixOf[kind]}${version}"`;
}

/**
 * The versions named by If-Match tags of a `kind` row; tags of another form (another kind's, a
 * task's hash, anything made up) name none and are left out, so they can never match.
 */
export function versionsOfTags(kind: RowKind, tags: readonly string[]): string[] {
  const pattern = new RegExp(`^"${prefixOf[kind]}([1-9][0-9]{0,${maxVersionDigits - 1}})"$`);
  const versions: string[] = [];
  for (const tag of tags) {
    const version = pattern.exec(tag)?.[1];
    if (version !== undefined) versions.push(version);
  }
  return versions;
}
