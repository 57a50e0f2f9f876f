// The webhooks delivery store alone, against a Postgres of its own: what the fan-out and the
// attempt log cost per delivery, in µs of wall time from one client on an idle machine. A quicker,
// steadier yardstick for a change to those statements than the pipeline bench (±10 % run to run).
//
//   npm run bench:store                      # 120 rounds of 150 events × 4 endpoints, attempts in batches of 50
//   BENCH_STORE_ROUNDS=60 BENCH_STORE_ATTEMPT_BATCH=200 npm run bench:store
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger, createPool, runMigrations } from '@tws/common';
import { startPostgres } from '@tws/devstack';
import { DeliveryStore } from '../services/webhooks/dist/store/deliveries.js';

const rounds = Number(process.env.BENCH_STORE_ROUNDS ?? 120);
const attemptBatch = Number(process.env.BENCH_STORE_ATTEMPT_BATCH ?? 50);
const eventsPerRound = 150;
const endpointCount = 4;
const warmupRounds = Math.min(20, Math.floor(rounds / 5));

const logDir = mkdtempSync(path.join(os.tmpdir(), 'tws-bench-store-'));
const postgres = await startPostgres(logDir);
try {
  const logger = createLogger('bench-store');
  logger.level = 'warn';
  const migrations = fileURLToPath(new URL('../services/webhooks/migrations', import.meta.url));
  await runMigrations({ url: postgres.url, schema: 'webhooks', directory: migrations, logger });
  // Settings as the service's own pool (app.ts).
  const pool = createPool({ url: postgres.url, schema: 'webhooks', applicationName: 'bench-store', max: 2, settings: { random_page_cost: '1.1' } });
  const workspaceId = 'bench-store';
  for (let i = 0; i < endpointCount; i += 1) {
    await pool.query(
      `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext) VALUES ($1, $2, $3, '{task.updated}', $4)`,
      [randomUUID(), workspaceId, `https://h${i}.bench.test/hook`, Buffer.alloc(60, 1)],
    );
  }
  const store = new DeliveryStore(pool);
  const payload = Buffer.from(JSON.stringify({ event: 'task.updated', data: { name: 'x'.repeat(400) } }));
  const spent = { fanOut: 0, attempts: 0, deliveries: 0 };
  for (let round = 0; round < rounds; round += 1) {
    const events = Array.from({ length: eventsPerRound }, (_, i) => ({
      id: `evt_${randomUUID()}`,
      workspaceId,
      type: 'task.updated',
      taskId: `task-${i % 50}`,
      payload,
    }));
    let started = performance.now();
    const { work } = await store.fanOut(events);
    const fanOutMs = performance.now() - started;
    started = performance.now();
    for (let i = 0; i < work.length; i += attemptBatch) {
      await store.completeAttempts(
        work.slice(i, i + attemptBatch).map((delivery) => ({
          deliveryId: delivery.deliveryId,
          attempt: 1,
          startedAt: new Date(),
          durationMs: 3,
          outcome: 'succeeded',
          statusCode: 200,
          error: null,
          next: { state: 'succeeded', nextAttempt: 1, nextAttemptAt: null, handoffPending: false },
        })),
      );
    }
    const attemptsMs = performance.now() - started;
    if (round >= warmupRounds) {
      spent.fanOut += fanOutMs;
      spent.attempts += attemptsMs;
      spent.deliveries += work.length;
    }
    if ((round + 1) % 40 === 0) console.log(`[bench:store] ${round + 1}/${rounds} rounds`);
  }
  const perDelivery = (ms) => Math.round((ms / spent.deliveries) * 1000 * 10) / 10;
  console.log(
    JSON.stringify({
      deliveries: spent.deliveries,
      attemptBatch,
      µsPerDelivery: {
        fanOut: perDelivery(spent.fanOut),
        attemptLog: perDelivery(spent.attempts),
        total: perDelivery(spent.fanOut + spent.attempts),
      },
    }),
  );
  await pool.end();
} finally {
  await postgres.stop();
  rmSync(logDir, { recursive: true, force: true });
}
