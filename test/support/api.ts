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

/** One HTTP call to the gateway of the test stack; parses JSON bodies. */
export async function api<T = unknown>(
  method: string,
  path: string,
  options: { credentials?: Credentials; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
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
