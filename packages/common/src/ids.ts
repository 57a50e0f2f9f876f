const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID in its canonical 36-character text form (any version, either case). */
export function isUuid(value: string): boolean {
  return value.length === 36 && uuidPattern.test(value);
}
