import { describe, expect, it } from 'vitest';
import { findNul } from './nul.js';

describe('findNul', () => {
  it('finds nothing where no string or key holds U+0000', () => {
    expect(findNul(undefined)).toBeUndefined();
    expect(findNul(42)).toBeUndefined();
    expect(findNul('plain')).toBeUndefined();
    expect(findNul({ a: 'x', b: [1, 'y', { c: null, d: true }], e: Buffer.from([0]) })).toBeUndefined();
  });

  it('names the path of the string that holds it: the value itself, a key, an index, nested', () => {
    expect(findNul('a\0')).toBe('');
    expect(findNul({ name: 'T\0' })).toBe('.name');
    expect(findNul(['ok', 'x\0y'])).toBe('[1]');
    expect(findNul({ description: [{ type: 'p', children: [{ text: 'a' }, { text: 'a\0' }] }] })).toBe('.description[0].children[1].text');
    expect(findNul({ tasks: [{ workspaceId: 'w', id: 'i' }, { workspaceId: 'w', id: '\0' }] })).toBe('.tasks[1].id');
  });

  it('reports a key holding U+0000 at its object, and skips byte buffers', () => {
    expect(findNul({ description: [{ type: 'p', children: [{ text: 'a', 'x\0': true }] }] })).toBe('.description[0].children[0]');
    expect(findNul({ 'k\0': 1 })).toBe('');
    expect(findNul({ data: new Uint8Array([0, 0]), name: 'ok' })).toBeUndefined();
  });

  it('looks at an object\'s own strings before what is nested in it', () => {
    expect(findNul({ nested: { text: 'b\0' }, name: 'a\0' })).toBe('.name');
    expect(findNul([{ text: 'b\0' }, 'a\0'])).toBe('[1]');
  });

  it('walks any depth and width without recursion', () => {
    let deep: unknown = 'end\0';
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(findNul(deep)).toBe('[0]'.repeat(100_000));
    const wide = Array.from({ length: 100_000 }, (_unused, index) => ({ id: String(index) }));
    expect(findNul(wide)).toBeUndefined();
  });
});
