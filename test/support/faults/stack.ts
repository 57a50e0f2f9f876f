import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { adminCliEnv, adminCliPath, startStack, type ServiceInstance, type Stack } from '@tws/devstack';
import { inject } from 'vitest';
import type { TestWorkspace } from '../admin.js';
import { testServiceEnv } from '../test-env.js';

/**
 * Helpers of the fault suites (test/faults): each suite that kills things runs its own stack, with
 * the webhooks service set up like the shared one (test DNS server, test CA, allow-listed receiver
 * address), so receivers from test/support/webhooks work against it too.
 */
export async function startFaultStack(
  label: string,
  options: { extraEnv?: NodeJS.ProcessEnv; replicas?: number; kafkaNodes?: number } = {},
): Promise<Stack> {
  const { webhooks } = inject('stack');
  return startStack({
    label,
    extraEnv: { ...testServiceEnv, ...webhooks.serviceEnv, ...options.extraEnv },
    ...(options.replicas ? { replicas: options.replicas } : {}),
    ...(options.kafkaNodes ? { kafkaNodes: options.kafkaNodes } : {}),
  });
}

export function instancesOf(stack: Stack, name: ServiceInstance['name']): ServiceInstance[] {
  return stack.services.instances.filter((instance) => instance.name === name);
}

/** The admin CLI against a fault suite's own stack (through the given tasks replica). */
export async function stackCli(stack: Stack, args: string[], tasks = instancesOf(stack, 'tasks')[0]!): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [adminCliPath, ...args], {
    env: {
      ...process.env,
      ...adminCliEnv({ tasksGrpcTarget: `127.0.0.1:${tasks.grpcPort}`, devJwtPrivateKeyFile: stack.devJwt.privateKeyFile }),
      LOG_LEVEL: 'silent',
    },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

export async function stackWorkspace(stack: Stack, plan: 'free' | 'pro' = 'pro'): Promise<TestWorkspace> {
  return (await stackCli(stack, ['workspace', 'create', '--name', `Faults ${Date.now()}`, '--plan', plan])) as unknown as TestWorkspace;
}

export interface TimedResponse {
  /** HTTP status, or 0 when the request failed at the network level, -1 when the client gave up (hung). */
  status: number;
  body: unknown;
  text: string;
  startedAt: number;
  ms: number;
  error?: string;
}

/**
 * One API call to `baseUrl` that never waits longer than `timeoutMs`: a request that has no answer
 * by then is reported with status -1 ("hung"), a connection failure with status 0.
 */
export async function timedCall(
  baseUrl: string,
  apiKey: string,
  method: string,
  urlPath: string,
  body?: unknown,
  timeoutMs = 15_000,
): Promise<TimedResponse> {
  const startedAt = Date.now();
  try {
    const response = await fetch(`${baseUrl}${urlPath}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text, startedAt, ms: Date.now() - startedAt };
  } catch (error) {
    const hung = (error as Error).name === 'TimeoutError';
    return { status: hung ? -1 : 0, body: undefined, text: '', startedAt, ms: Date.now() - startedAt, error: String((error as Error).cause ?? error) };
  }
}

/** Fetches `${url}` and says whether it answered 200 (false on any error). */
export async function isOk(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function countBy<T>(items: T[], key: (item: T) => string | number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[String(key(item))] = (counts[String(key(item))] ?? 0) + 1;
  return counts;
}
