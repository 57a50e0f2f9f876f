import path from 'node:path';
import { devJwtGatewayEnv, freePort, serviceNodeFlags, repoRoot, startProcess, waitUntil, type ManagedProcess } from '@tws/devstack';
import { inject } from 'vitest';
import { testServiceEnv } from './test-env.js';

export interface ExtraGateway {
  url: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * One more gateway replica against the shared test stack's backends (its own port, its own caches and
 * its own revocation stream to the tasks service), for tests of "refused on every replica at once"
 * that do not need a stack of their own. It trusts the app's tokens as the stack's gateway does. Rate limits are off so warming its caches never meets them
 * (unless `env` turns them on).
 */
export async function startExtraGateway(
  label: string,
  options: { publicBaseUrl?: string; tasksGrpcTarget?: string; env?: Record<string, string> } = {},
): Promise<ExtraGateway> {
  const stack = inject('stack');
  const target = (name: string): string => `127.0.0.1:${stack.services.find((service) => service.name === name)?.grpcPort}`;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...testServiceEnv,
    ...devJwtGatewayEnv({ privateKeyFile: stack.devJwtPrivateKeyFile, publicKeyPem: stack.devJwtPublicKeyPem }),
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: String(port),
    // Replicas of one deployment share one public name (the app's tokens carry it as `aud`): pass the stack
    // gateway's to accept those tokens here too; by default the replica's own address.
    PUBLIC_BASE_URL: options.publicBaseUrl ?? url,
    ...(stack.webUrl ? { AUTH_APP_ISSUER_URL: stack.webUrl } : {}),
    // Another tasks replica (test/support/extra-tasks.ts) when given.
    TASKS_GRPC_TARGET: options.tasksGrpcTarget ?? target('tasks'),
    ATTACHMENTS_GRPC_TARGET: target('attachments'),
    WEBHOOKS_GRPC_TARGET: target('webhooks'),
    RATE_LIMIT_PER_SECOND: '0',
    AUTH_FAILURES_PER_MINUTE: '0',
    // Overrides (e.g. rate limits on, for the tests of the limit shared by replicas).
    ...options.env,
  };
  const entry = path.join(repoRoot, 'services', 'gateway', 'dist', 'main.js');
  const started = startProcess(`gateway-${label}`, process.execPath, [...serviceNodeFlags, entry], { logDir: stack.logDir, env });
  try {
    await waitUntil(`gateway ${label}`, async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 60_000, process: started });
    // Ready is not enough: its revocation stream must be up before its caches are trusted.
    await waitUntil(`gateway ${label} revocation stream`, async () => /^auth_revocation_stream_connected(\{[^}]*\})? 1$/m.test(await (await fetch(`${url}/metrics`)).text()), {
      timeoutMs: 30_000,
      process: started,
    });
  } catch (error) {
    await started.stop();
    throw error;
  }
  return { url, process: started, stop: () => started.stop() };
}
