/**
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded name>` (RFC 6266 with
 * the RFC 8187 extended parameter), so every browser saves the file under its name, unicode included.
 * `attachment` also keeps browsers from rendering uploaded HTML or SVG on the storage origin; images
 * embedded with <img> still display.
 */
export function contentDisposition(fileName: string): string {
  return `attachment; filename="${asciiFallback(fileName)}"; filename*=UTF-8''${encodeExtValue(fileName)}`;
}

/** Printable ASCII only, without `"`, `\` and `%` (which some clients decode); others become `_`. */
export function asciiFallback(fileName: string): string {
  return fileName.replace(/[^\x20-\x7e]|["\\%]/gu, '_');
}

/** RFC 8187 value-chars: attr-char stays, every other UTF-8 byte is %XX. */
export function encodeExtValue(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}
