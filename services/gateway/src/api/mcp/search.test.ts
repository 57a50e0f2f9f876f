import { expect, test } from 'vitest';
import { parseTaskUrl } from './resources.js';
import { nextCursorOf } from './rest.js';
import { matchIn, plainText } from './search.js';

test('plain text of a description: the leaves text in document order', () => {
  const nodes = [
    { type: 'heading', children: [{ type: 'text', text: 'Fix ' }, { type: 'text', text: 'login', bold: true }] },
    { type: 'paragraph', children: [{ type: 'text', text: ' today' }] },
  ];
  expect(plainText(nodes)).toBe('Fix login today');
  expect(plainText(null)).toBe('');
});

test('a hostile depth is walked without recursion', () => {
  let node: Record<string, unknown> = { type: 'text', text: 'deep' };
  for (let i = 0; i < 100_000; i++) node = { type: 'p', children: [node] };
  expect(plainText([node])).toBe('deep');
});

test('matches are case-insensitive, in the name first', () => {
  const description = [{ type: 'p', children: [{ type: 'text', text: 'Call the Bank' }] }];
  expect(matchIn({ name: 'Pay invoices', description }, 'bank')).toBe('description');
  expect(matchIn({ name: 'Bank visit', description }, 'bank')).toBe('name');
  expect(matchIn({ name: 'Other', description: null }, 'bank')).toBeUndefined();
});

test('task URLs of the app only', () => {
  const app = 'https://app.example.test';
  expect(parseTaskUrl(`${app}/acme/task/WEB-12`, app)).toEqual({ urlId: 'acme', taskPrefix: 'WEB', number: 12 });
  expect(parseTaskUrl(`${app}/acme%20co/task/web-1`, app)).toEqual({ urlId: 'acme co', taskPrefix: 'web', number: 1 });
  for (const uri of [
    'https://evil.example/acme/task/WEB-12',
    `${app}.evil.example/acme/task/WEB-12`,
    `${app}/acme/task/WEB-0`,
    `${app}/acme/task/WEB-12?x=1`,
    `${app}/a/b/task/WEB-12`,
    `${app}/%E0%A4%A/task/WEB-1`,
    `${app}/acme/task/WEB-1234567890`,
  ]) {
    expect(parseTaskUrl(uri, app), uri).toBeUndefined();
  }
});

test('the next cursor of a Link header: only rel="next", only its cursor parameter', () => {
  const url = 'https://api.example.test/v1/projects/p/tasks?limit=3&cursor=eyJhIjoxfQ.abcdefghijkl';
  expect(nextCursorOf(`<${url}>; rel="next"`)).toBe('eyJhIjoxfQ.abcdefghijkl');
  expect(nextCursorOf(`<${url}>;rel=next`)).toBe('eyJhIjoxfQ.abcdefghijkl');
  expect(nextCursorOf(`<${url}>; rel="prev"`)).toBeUndefined();
  expect(nextCursorOf('<https://api.example.test/v1/projects/p/tasks?limit=3>; rel="next"')).toBeUndefined();
  expect(nextCursorOf(undefined)).toBeUndefined();
  expect(nextCursorOf(`<${'x'.repeat(5000)}>; rel="next"`)).toBeUndefined();
});
