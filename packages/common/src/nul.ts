/**
 * U+0000 cannot be stored in Postgres text or jsonb. Every edge (the gateway's HTTP bodies and each
 * service's gRPC requests) refuses a string holding it with a message naming the field, so no such
 * write reaches the database as a 500.
 */
export const nulMessage = 'must not contain the NUL character (U+0000)';

/** An object or array still to be looked into, and how it was reached (for the path of a hit). */
interface Container {
  value: object;
  parent: Container | undefined;
  step: string | number | undefined;
}

function pathOf(container: Container, step?: string | number): string {
  const steps: Array<string | number> = step === undefined ? [] : [step];
  for (let at: Container | undefined = container; at?.step !== undefined; at = at.parent) steps.push(at.step);
  return steps.reduceRight<string>((path, next) => (typeof next === 'number' ? `${path}[${next}]` : `${path}.${next}`), '');
}

const isContainer = (value: unknown): value is object => typeof value === 'object' && value !== null && !ArrayBuffer.isView(value);

/** Whether `child` (reached from `parent` by `step`) is a string holding U+0000; an object or array child is added to `nested`. */
function holdsNul(child: unknown, parent: Container, step: string | number, nested: Container[]): boolean {
  if (typeof child === 'string') return child.includes('\0');
  if (isContainer(child)) nested.push({ value: child, parent, step });
  return false;
}

/**
 * The path (`.a[0].b`, empty for `value` itself) of a string in `value` that holds U+0000, or of the
 * object one of whose keys does; byte buffers are not text and are skipped. Each object's own keys
 * and strings are looked at before what is nested in it. Iterative: nesting depth is unbounded.
 * Called on every request at each edge, so it allocates only for the objects and arrays it descends
 * into, and builds a path only for a hit.
 */
export function findNul(value: unknown): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? '' : undefined;
  if (!isContainer(value)) return undefined;
  const pending: Container[] = [{ value, parent: undefined, step: undefined }];
  for (let container = pending.pop(); container !== undefined; container = pending.pop()) {
    const nested: Container[] = [];
    const current = container.value;
    if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index++) if (holdsNul(current[index], container, index, nested)) return pathOf(container, index);
    } else {
      for (const key in current) {
        if (!Object.hasOwn(current, key)) continue;
        // A key with NUL is reported at its object: the path does not carry the NUL on.
        if (key.includes('\0')) return pathOf(container);
        if (holdsNul((current as Record<string, unknown>)[key], container, key, nested)) return pathOf(container, key);
      }
    }
    // Pushed last first, so they are looked into in order.
    for (let index = nested.length - 1; index >= 0; index--) pending.push(nested[index] as Container);
  }
  return undefined;
}
