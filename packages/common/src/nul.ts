/**
 * U+0000 cannot be stored in Postgres text or jsonb. Every edge (the gateway's HTTP bodies and each
 * service's gRPC requests) refuses a string holding it with a message naming the field, so no such
 * write reaches the database as a 500.
 */
export const nulMessage = 'must not contain the NUL character (U+0000)';

/**
 * The path (`.a[0].b`, empty for `value` itself) of the first string in `value` that holds U+0000, or
 * of the object one of whose keys does; byte buffers are not text and are skipped. Iterative: nesting depth is unbounded.
 */
export function findNul(value: unknown): string | undefined {
  const pending: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, path } = next;
    if (typeof current === 'string') {
      if (current.includes('\0')) return path;
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) pending.push({ value: current[index], path: `${path}[${index}]` });
    } else if (typeof current === 'object' && current !== null && !ArrayBuffer.isView(current)) {
      for (const [key, child] of Object.entries(current)) {
        // A key with NUL is reported at its object: the path does not carry the NUL on.
        if (key.includes('\0')) return path;
        pending.push({ value: child, path: `${path}.${key}` });
      }
    }
  }
  return undefined;
}
