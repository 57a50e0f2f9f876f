import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';

export type Credentials =
  | { apiKey: string }
  | { bearer: string; workspaceId: string }
  | Record<string, never>;

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

interface CallOptions {
  credentials?: Credentials;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** How long a call waits out a 429 before trying again: at most this Retry-After, this many times. */
const rateLimitWait = { maxRetryAfterSeconds: 5, retries: 5 };

/**
 * One HTTP call to the gateway of the test stack; parses JSON bodies. Like a well-behaved client, it
 * waits out a 429 whose Retry-After is short and tries again: a file's many calls with one key must
 * not fail on how fast the machine ran them (the limit is 50/s per credential). `rateLimited: 'return'`
 * hands the 429 back instead, for the tests of the limits themselves.
 */
export async function api<T = unknown>(
  method: string,
  path: string,
  options: CallOptions & { rateLimited?: 'wait' | 'return' } = {},
): Promise<ApiResponse<T>> {
  for (let retry = 0; ; retry++) {
    const response = await callOnce<T>(method, path, options);
    const retryAfter = Number(response.headers.get('retry-after'));
    const waitable = response.status === 429 && retryAfter >= 1 && retryAfter <= rateLimitWait.maxRetryAfterSeconds;
    if (!waitable || options.rateLimited === 'return' || retry === rateLimitWait.retries) return response;
    await sleep(retryAfter * 1000);
  }
}

async function callOnce<T>(method: string, path: string, options: CallOptions): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const credentials = options.credentials ?? {};
  if ('apiKey' in credentials) headers['x-api-key'] = credentials.apiKey;
  if ('bearer' in credentials) {
    headers.authorization = `Bearer ${credentials.bearer}`;
    headers['x-workspace-id'] = credentials.workspaceId;
  }
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${inject('stack').gatewayUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text.length > 0 && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}
