import { describe, expect, it } from 'vitest';
import { DomainError } from '@tws/common';
import { sanitiseFileName } from './names.js';

function rejection(raw: string): string {
  try {
    sanitiseFileName(raw);
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'invalid_argument') return error.message;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be rejected`);
}

describe('sanitiseFileName', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['Résumé final.docx', 'Résumé final.docx'],
    ['报告 2026.xlsx', '报告 2026.xlsx'],
    ['👨‍👩‍👧 family.jpg', '👨‍👩‍👧 family.jpg'],
    ['  padded.txt  ', 'padded.txt'],
    ['Meeting 10:30.txt', 'Meeting 10:30.txt'],
    ['.env', '.env'],
  ])('keeps %j as %j', (raw, expected) => {
    expect(sanitiseFileName(raw)).toBe(expected);
  });

  it('replaces path separators of every platform', () => {
    expect(sanitiseFileName('../../etc/passwd')).toBe('.._.._etc_passwd');
    expect(sanitiseFileName('C:\\Users\\me\\file.txt')).toBe('C:_Users_me_file.txt');
    expect(sanitiseFileName('/')).toBe('_');
  });

  it('removes control characters, line separators and bidirectional overrides', () => {
    expect(sanitiseFileName('a\u0000b\u0007c\td\ne\r.txt')).toBe('abcde.txt');
    expect(sanitiseFileName('x\u007f\u0085\u009fy')).toBe('xy');
    expect(sanitiseFileName('line\u2028para\u2029.txt')).toBe('linepara.txt');
    // "invoice\u202Efdp.exe" displays as "invoiceexe.pdf".
    expect(sanitiseFileName('invoice\u202Efdp.exe')).toBe('invoicefdp.exe');
    expect(sanitiseFileName('\uFEFFbom.txt')).toBe('bom.txt');
    expect(sanitiseFileName('lone\uD800surrogate')).toBe('lonesurrogate');
  });

  it('normalises to NFC', () => {
    expect(sanitiseFileName('Cafe\u0301.txt')).toBe('Caf\u00e9.txt');
  });

  it.each(['', '   ', '\u0000\u0001', '.', '..', ' .. '])('rejects %j as having no usable name', (raw) => {
    expect(rejection(raw)).toMatch(/visible character/);
  });

  it('allows 255 characters counted as code points, rejects 256', () => {
    expect(sanitiseFileName('a'.repeat(255))).toHaveLength(255);
    expect(sanitiseFileName('😀'.repeat(255))).toBe('😀'.repeat(255));
    expect(rejection('a'.repeat(256))).toBe('name must be at most 255 characters');
    expect(rejection('😀'.repeat(256))).toBe('name must be at most 255 characters');
  });
});
