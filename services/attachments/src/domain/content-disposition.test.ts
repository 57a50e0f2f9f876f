import { describe, expect, it } from 'vitest';
import { asciiFallback, contentDisposition, encodeExtValue } from './content-disposition.js';

describe('contentDisposition (RFC 6266 + RFC 8187)', () => {
  it('names a plain ASCII file in both parameters', () => {
    expect(contentDisposition('report.pdf')).toBe(`attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
  });

  it('percent-encodes UTF-8 in filename* and falls back to _ in filename', () => {
    expect(contentDisposition('Résumé.pdf')).toBe(`attachment; filename="R_sum_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf`);
    expect(contentDisposition('报告.txt')).toBe(`attachment; filename="__.txt"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.txt`);
    expect(contentDisposition('😀.png')).toBe(`attachment; filename="_.png"; filename*=UTF-8''%F0%9F%98%80.png`);
  });

  it('keeps quotes, backslashes and percent signs out of the quoted fallback', () => {
    expect(asciiFallback('a "quoted" \\ 100%.txt')).toBe('a _quoted_ _ 100_.txt');
  });

  it("encodes every character outside RFC 8187 attr-char, including ' ( ) * and space", () => {
    expect(encodeExtValue("it's (a) *draft* v1;x=2 a,b.txt")).toBe('it%27s%20%28a%29%20%2Adraft%2A%20v1%3Bx%3D2%20a%2Cb.txt');
    // Unreserved attr-chars stay literal (the others may be percent-encoded: both forms are valid).
    expect(encodeExtValue('AZaz09!-._~')).toBe('AZaz09!-._~');
  });

  it('round-trips through decodeURIComponent', () => {
    const name = "Ünïcödé 'quoted' (1) 测试 😀.tar.gz";
    const header = contentDisposition(name);
    const encoded = /filename\*=UTF-8''(\S+)$/.exec(header)?.[1];
    expect(encoded && decodeURIComponent(encoded)).toBe(name);
    expect(encoded).toMatch(/^[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
  });
});
