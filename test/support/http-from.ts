import http from 'node:http';
import { inject } from 'vitest';
import type { ApiResponse } from './api.js';

/**
 * One HTTP call to the gateway from another loopback source address (127.0.0.0/8 all reaches the
 * gateway on 127.0.0.1), so per-IP limits tripped by a test block only that address.
 */
export function requestFrom(
  sourceAddress: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<ApiResponse> {
  const url = new URL(path, inject('stack').gatewayUrl);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers, localAddress: sourceAddress },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          const json = (response.headers['content-type'] ?? '').includes('json') && text.length > 0;
          resolve({ status: response.statusCode ?? 0, headers: responseHeaders, body: json ? (JSON.parse(text) as unknown) : undefined, text });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
