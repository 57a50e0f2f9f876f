import path from 'node:path';
import { freePort, serviceNodeFlags, repoRoot, startProcess, waitUntil, type ManagedProcess } from '@tws/devstack';
import { inject } from 'vitest';
import { testServiceEnv } from './test-env.js';

export interface ExtraTasks {
  /** Pass as TASKS_GRPC_TARGET (e.g. `startExtraGateway(label, { tasksGrpcTarget })`). */
  grpcTarget: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * One more tasks replica against the shared test stack's Postgres and Kafka, with settings of its
 * own (`env`): for tests of a tasks setting (a short TTL, …) that need no stack of their own. Its
 * outbox relay stands by (the stack's replica holds the relay's lock).
 */
export async function startExtraTasks(label: string, env: NodeJS.ProcessEnv): Promise<ExtraTasks> {
  const stack = inject('stack');
  const [grpcPort, opsPort] = [await freePort(), await freePort()];
  const started = startProcess(`tasks-${label}`, process.execPath, [...serviceNodeFlags, path.join(repoRoot, 'services', 'tasks', 'dist', 'main.js')], {
    logDir: stack.logDir,
    env: {
      ...process.env,
      ...testServiceEnv,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      GRPC_PORT: String(grpcPort),
      OPS_PORT: String(opsPort),
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      KAFKA_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TOPIC_MIN_INSYNC_REPLICAS: '1',
      ...env,
    },
  });
  try {
    await waitUntil(`tasks ${label}`, async () => (await fetch(`http://127.0.0.1:${opsPort}/readyz`)).ok, { timeoutMs: 60_000, process: started });
  } catch (error) {
    await started.stop();
    throw error;
  }
  return { grpcTarget: `127.0.0.1:${grpcPort}`, process: started, stop: () => started.stop() };
}
