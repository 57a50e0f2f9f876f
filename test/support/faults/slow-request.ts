import http from 'node:http';

export interface SlowResult {
  status: number;
  text: string;
  /** When the connection was established (the server accepted it). */
  connectedAt: number;
  startedAt: number;
  endedAt: number;
  error?: string;
}

/**
 * A JSON request whose body trickles in: the first half is written at once, the rest after
 * `bodyDelayMs`, so the request is in flight (accepted, unfinished) for that long. A new connection
 * per request (no keep-alive), so "accepted" means exactly "the TCP connection was established".
 */
export function slowJsonRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
  bodyDelayMs: number,
  onConnected?: () => void,
): Promise<SlowResult> {
  const url = new URL(path, baseUrl);
  const payload = Buffer.from(JSON.stringify(body));
  const half = Math.floor(payload.length / 2);
  const startedAt = Date.now();
  let connectedAt = 0;
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length), connection: 'close' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) =>
          resolve({ status: 0, text: '', connectedAt, startedAt, endedAt: Date.now(), error: `response: ${error.message}` }),
        );
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), connectedAt, startedAt, endedAt: Date.now() }),
        );
      },
    );
    request.on('socket', (socket) =>
      socket.once('connect', () => {
        connectedAt = Date.now();
        onConnected?.();
        request.write(payload.subarray(0, half));
        setTimeout(() => request.end(payload.subarray(half)), bodyDelayMs);
      }),
    );
    request.on('error', (error) => resolve({ status: 0, text: '', connectedAt, startedAt, endedAt: Date.now(), error: error.message }));
    request.setTimeout(30_000, () => request.destroy(new Error('hung: no response in 30 s')));
  });
}
