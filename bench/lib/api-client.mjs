// The bench's own HTTP client of the gateway (setting up workspaces, tasks and endpoints, and the
// webhook runs' PATCHes), and a bounded-concurrency loop.
import { Pool } from 'undici';
import { onCleanup } from './cleanup.mjs';

export function apiClient(gatewayUrl, key, connections = 16) {
  const pool = new Pool(gatewayUrl, { connections, pipelining: 1 });
  onCleanup(() => pool.close());
  async function call(method, urlPath, body) {
    const response = await pool.request({
      method,
      path: urlPath,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${method} ${urlPath} answered ${response.statusCode}: ${text}`);
    return {
      status: response.statusCode,
      text,
      // Parsed when asked for: the webhook runs send hundreds of PATCHes a second and need the status only.
      get json() {
        return text ? JSON.parse(text) : null;
      },
    };
  }
  return { call, pool };
}

/** Runs `fn(i)` for i in 0..count-1 with at most `concurrency` at once. */
export async function inParallel(count, concurrency, fn) {
  const results = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await fn(i);
      }
    }),
  );
  return results;
}
