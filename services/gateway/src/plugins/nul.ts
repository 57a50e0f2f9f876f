/** In JSON text a NUL can only be written as an escape: bodies without one are not walked. */
const escapedNul = /\\u0000/i;

export function mayHoldNul(jsonText: string): boolean {
  return escapedNul.test(jsonText);
}
