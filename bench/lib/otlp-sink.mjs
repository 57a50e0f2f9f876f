// BENCH_TRACING=1: the services export their traces (OpenTelemetry, default sampling: parent-based,
// 10 % of new traces) over OTLP/HTTP to otlp-sink-server.mjs, a receiver in its own process on
// loopback, as they would to a collector. Its CPU is reported beside the services' (not counted in
// CPU ms/req), and its request and byte counts go into the results (`tracing`).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onCleanup } from './cleanup.mjs';
import { watch } from './cpu.mjs';

const serverFile = fileURLToPath(new URL('./otlp-sink-server.mjs', import.meta.url));

/** Starts the receiver; `endpoint` is OTEL_EXPORTER_OTLP_ENDPOINT for the services, `stats()` its counts. */
export async function startOtlpSink() {
  const child = fork(serverFile, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`OTLP receiver exited (${code})`)));
  });
  watch({ name: 'OTLP receiver', pid: child.pid });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    /** { exportRequests, bytes, rejected } so far (null if the receiver is gone). */
    stats: () =>
      new Promise((resolve) => {
        if (!child.connected) return resolve(null);
        const timer = setTimeout(() => resolve(null), 2_000);
        child.once('message', (message) => {
          clearTimeout(timer);
          resolve(message.stats ?? null);
        });
        child.send('stats');
      }),
  };
}
