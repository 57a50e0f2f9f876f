import http from 'node:http';

/** A response whose body is left unread until `text()`. */
export interface PausedResponse {
  status: number;
  /** Reads the rest of the body; rejects when the server cut it (the connection closed before its end). */
  text(): Promise<string>;
}

/**
 * A GET (its own connection) whose body nobody reads until `text()`: Node stops reading the socket
 * once its small buffer is full, so the client's kernel receive window stays near its first size
 * instead of growing with reads (up to `tcp_rmem`'s maximum, 32 MB here). A client that stopped
 * reading, as a test of the server's back-pressure needs it; `fetch` keeps reading into its body stream.
 */
export function pausedGet(url: string, headers: Record<string, string>): Promise<PausedResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: target.hostname, port: target.port, path: target.pathname + target.search, headers, agent: false }, (response) => {
      response.pause();
      const text = (): Promise<string> =>
        new Promise((done, fail) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', fail);
          response.on('close', () => {
            if (response.complete) done(Buffer.concat(chunks).toString('utf8'));
            else fail(new Error(`the body was cut after ${chunks.reduce((sum, chunk) => sum + chunk.length, 0)} bytes`));
          });
          response.resume();
        });
      resolve({ status: response.statusCode ?? 0, text });
    });
    request.on('error', reject);
    request.end();
  });
}
