/** Progress lines for people watching `npm start` / `npm test`; on stderr so stdout stays machine-readable. */
export function progress(message: string): void {
  process.stderr.write(`[devstack] ${message}\n`);
}

/** An error that names the component and step that failed, with the log to read. */
export class DevstackError extends Error {
  override readonly name = 'DevstackError';
}
