import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { nodeFlags, repoRoot, startProcess, type ManagedProcess, type ServiceInstance, type Stack } from '@tws/devstack';
import { unaryApi } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instancesOf, isOk, sleep, stackCli, stackWorkspace, startFaultStack, timedCall } from '../support/faults/stack.js';
import type { TestWorkspace } from '../support/admin.js';

/**
 * Revocation is immediate (#16 item 5): two tasks replicas, two gateway replicas, each gateway's
 * revocation stream pinned to a different tasks replica (gateway-0 → tasks-0, gateway-1 → tasks-1),
 * so a revocation committed through tasks-0 reaches gateway-1 only through Postgres NOTIFY and
 * tasks-1. No sleep between a revoke and the requests that must be refused.
 */
describe('revocation: every gateway replica refuses a revoked key on its very next request', () => {
  let stack: Stack;
  let tasks: ServiceInstance[];
  let gateways: ServiceInstance[];
  let restarted: ManagedProcess | undefined;
  let admin: grpc.Client;
  let revokeApiKey: (request: { workspaceId: string; id: string }) => Promise<unknown>;
  let ws: TestWorkspace;

  beforeAll(async () => {
    stack = await startFaultStack('faults-revocation', { extraEnv: { RATE_LIMIT_PER_SECOND: '0', AUTH_FAILURES_PER_MINUTE: '0' } });
    const tasks1 = await stack.services.startReplica('tasks');
    tasks = [instancesOf(stack, 'tasks')[0]!, tasks1];
    const gateway1 = await stack.services.startReplica('gateway', { TASKS_GRPC_TARGET: `127.0.0.1:${tasks1.grpcPort}` });
    gateways = [instancesOf(stack, 'gateway')[0]!, gateway1];
    const client = new (loadTasksProto().tasks.v1.AdminService)(`127.0.0.1:${tasks[0]!.grpcPort}`, grpc.credentials.createInsecure());
    admin = client;
    revokeApiKey = unaryApi(client, ['RevokeApiKey'], 15_000).RevokeApiKey;
    ws = await stackWorkspace(stack);
    for (const gateway of gateways) await waitFor(async () => (await metric(gateway, 'auth_revocation_stream_connected')) === 1, 'both streams ready');
  }, 300_000);
  afterAll(async () => {
    admin?.close();
    await restarted?.stop();
    await stack?.stop();
  }, 120_000);

  const get = (gateway: ServiceInstance, key: string, timeoutMs?: number) => timedCall(gateway.opsUrl, key, 'GET', '/v1/workspace', undefined, timeoutMs);
  const newKey = async (name: string): Promise<{ id: string; key: string }> =>
    ((await stackCli(stack, ['apikey', 'create', '--workspace', ws.workspace.id, '--user', ws.owner.userId, '--name', name])) as { apiKey: { id: string; key: string } }).apiKey;
  /** AuthenticateApiKey calls served by each tasks replica (how many key lookups reached the database). */
  const lookups = async (): Promise<number[]> =>
    Promise.all(tasks.map((instance) => metric(instance, 'grpc_server_handled_total', { grpc_method: 'AuthenticateApiKey' })));
  async function warm(keys: string[], on: ServiceInstance[] = gateways): Promise<void> {
    for (const gateway of on) for (const key of keys) for (let n = 0; n < 3; n++) expect((await get(gateway, key)).status).toBe(200);
  }

  it('revoked through AdminService: 401 on both replicas at once, while the other keys stay cached', async () => {
    const victim = ws.apiKey;
    const kept = await newKey('kept');
    await warm([victim.key, kept.key]);
    const before = await lookups();

    const startedAt = Date.now();
    await revokeApiKey({ workspaceId: ws.workspace.id, id: victim.id });
    const returnedAt = Date.now();
    const next = await Promise.all(gateways.map((gateway) => get(gateway, victim.key)));
    expect(next.map((response) => response.status)).toEqual([401, 401]);

    for (const gateway of gateways) for (let n = 0; n < 5; n++) expect((await get(gateway, kept.key)).status).toBe(200);
    // One lookup per replica (the revoked key's refused request); the kept key never left the caches.
    expect((await lookups()).map((count, n) => count - before[n]!)).toEqual([1, 1]);

    const applied = gateways.map((gateway) => appliedAt(gateway, startedAt));
    console.log(
      `revocation: RevokeApiKey took ${returnedAt - startedAt} ms; invalidation applied ${applied
        .map((at, n) => `at gateway-${n} ${returnedAt - at} ms before the RPC returned`)
        .join(', ')}`,
    );
    for (const at of applied) expect(at).toBeLessThanOrEqual(returnedAt);
  });

  it('revoked through the admin CLI: refused at once on both replicas', async () => {
    const victim = await newKey('cli victim');
    await warm([victim.key]);
    const result = await stackCli(stack, ['apikey', 'revoke', '--workspace', ws.workspace.id, '--id', victim.id]);
    expect(result).toEqual({ apiKey: { id: victim.id, revoked: true } });
    expect((await Promise.all(gateways.map((gateway) => get(gateway, victim.key)))).map((response) => response.status)).toEqual([401, 401]);
  });

  it('a slow tasks replica (paused 500 ms as the revocation commits): RevokeApiKey waits for its gateway, which refuses the next request', async () => {
    const victim = await newKey('revoked while tasks-1 is slow');
    await warm([victim.key]);
    const pid = tasks[1]!.process.child.pid!;
    process.kill(pid, 'SIGSTOP');
    const resume = sleep(500).then(() => process.kill(pid, 'SIGCONT'));
    let revokeMs: number;
    try {
      const started = Date.now();
      await revokeApiKey({ workspaceId: ws.workspace.id, id: victim.id });
      revokeMs = Date.now() - started;
    } finally {
      await resume;
    }
    // Without the wait for every replica's acknowledgement, gateway-1 would still answer from its cache here.
    expect((await Promise.all(gateways.map((gateway) => get(gateway, victim.key)))).map((response) => response.status)).toEqual([401, 401]);
    expect(revokeMs).toBeGreaterThanOrEqual(450);
    console.log(`revocation: with tasks-1 paused for 500 ms, RevokeApiKey returned after ${revokeMs} ms`);
  });

  it('a membership that ended (what member removal publishes) evicts the cached membership on both replicas', async () => {
    const token = ((await stackCli(stack, ['token', 'issue', '--workspace', ws.workspace.id, '--user', ws.owner.userId, '--scope', 'read'])) as { token: string }).token;
    const asOwner = async (gateway: ServiceInstance) =>
      (await fetch(`${gateway.opsUrl}/v1/workspace`, { headers: { authorization: `Bearer ${token}`, 'x-workspace-id': ws.workspace.id } })).status;
    const memberships = () => Promise.all(tasks.map((instance) => metric(instance, 'grpc_server_handled_total', { grpc_method: 'GetMembership' })));
    for (const gateway of gateways) for (let n = 0; n < 3; n++) expect(await asOwner(gateway)).toBe(200);
    const before = await memberships();
    for (const gateway of gateways) expect(await asOwner(gateway)).toBe(200);
    expect(await memberships()).toEqual(before);

    // Member removal does not exist yet: send its notification (domain/revocations.ts membershipEnded) as it will.
    const db = new pg.Client({ connectionString: stack.infra.databaseUrl });
    await db.connect();
    try {
      const notice = { id: crypto.randomUUID(), kind: 'membership', workspaceId: ws.workspace.id, userId: ws.owner.userId, at: Date.now() };
      await db.query('SELECT pg_notify($1, $2)', ['auth_revocations', JSON.stringify(notice)]);
    } finally {
      await db.end();
    }
    await waitFor(async () => (await Promise.all(gateways.map((gateway) => metric(gateway, 'auth_revocations_received_total', { kind: 'membership' })))).every((count) => count === 1), 'membership revocation received');
    for (const gateway of gateways) expect(await asOwner(gateway)).toBe(200);
    expect((await memberships()).map((count, n) => count - before[n]!)).toEqual([1, 1]);
  });

  it('its tasks replica stopped: the gateway bypasses its cache; a key revoked meanwhile is refused as soon as tasks answers again', async () => {
    const [gateway0, gateway1] = gateways as [ServiceInstance, ServiceInstance];
    const kept = await newKey('kept across the outage');
    const victim = await newKey('revoked during the outage');
    await warm([kept.key, victim.key], [gateway1]);

    // A graceful stop does not wait for the open stream (the drain would otherwise take its 10 s grace).
    const stopStarted = Date.now();
    await tasks[1]!.process.stop();
    const stopMs = Date.now() - stopStarted;
    expect(stopMs).toBeLessThan(5_000);
    expect(await metric(gateway1, 'auth_revocation_stream_connected')).toBe(0);
    // Nothing from memory while the stream is down: the warm key is looked up, and tasks-1 is gone.
    expect((await get(gateway1, kept.key)).status).toBe(503);

    await stackCli(stack, ['apikey', 'revoke', '--workspace', ws.workspace.id, '--id', victim.id]);
    expect((await get(gateway0, victim.key)).status).toBe(401);

    restarted = restartReplica(tasks[1]!);
    await waitFor(() => isOk(`${tasks[1]!.opsUrl}/readyz`), 'tasks-1 ready again');
    // Until gateway-1's channel reconnects its calls fail (503); the first one that reaches tasks is
    // refused, whether or not the stream is back yet: never a 200 from a stale cache.
    const answers: number[] = [];
    await waitFor(async () => answers[answers.push((await get(gateway1, victim.key)).status) - 1] !== 503, 'a request through gateway-1 reaches tasks-1');
    expect(answers.at(-1)).toBe(401);
    expect(answers.filter((status) => status !== 503 && status !== 401)).toEqual([]);
    expect((await get(gateway1, kept.key)).status).toBe(200);

    await waitFor(async () => (await metric(gateway1, 'auth_revocation_stream_connected')) === 1, 'gateway-1 stream ready again');
    await warm([kept.key], [gateway1]);
    const before = await lookups();
    await warm([kept.key], [gateway1]);
    expect(await lookups()).toEqual(before);
    console.log(`revocation: tasks-1 stopped in ${stopMs} ms with a gateway stream open; gateway-1 answered ${JSON.stringify(answers)} until tasks-1 was back`);
  }, 120_000);

  it('its tasks replica hangs (SIGSTOP): silence cuts the stream within 3 heartbeats, and the revoker waits a bounded time', async () => {
    const gateway1 = gateways[1]!;
    const replica = restarted!;
    const victim = await newKey('revoked while tasks-1 hangs');
    await waitFor(async () => (await metric(gateway1, 'auth_revocation_stream_connected')) === 1, 'gateway-1 stream ready');
    await warm([victim.key], [gateway1]);

    process.kill(replica.child.pid!, 'SIGSTOP');
    const stoppedAt = Date.now();
    try {
      await waitFor(async () => (await metric(gateway1, 'auth_revocation_stream_connected')) === 0, 'gateway-1 notices the silence', 10_000);
      const noticedMs = Date.now() - stoppedAt;
      // The warm key is not answered from memory (its lookup waits on the hung replica).
      expect((await get(gateway1, victim.key, 1_500)).status).not.toBe(200);

      // tasks-1's LISTEN session is still open, so the revoker waits for it, but only so long.
      const started = Date.now();
      await revokeApiKey({ workspaceId: ws.workspace.id, id: victim.id });
      const waitedMs = Date.now() - started;
      console.log(`revocation: gateway-1 distrusted its caches ${noticedMs} ms after tasks-1 hung; RevokeApiKey waited ${waitedMs} ms for it`);
      expect(noticedMs).toBeGreaterThan(1_500);
      expect(noticedMs).toBeLessThan(5_000);
      expect(waitedMs).toBeGreaterThan(4_000);
      expect(waitedMs).toBeLessThan(9_000);
    } finally {
      process.kill(replica.child.pid!, 'SIGCONT');
    }
    await waitFor(async () => (await get(gateway1, victim.key, 3_000)).status === 401, 'gateway-1 refuses the key once tasks-1 answers');
  }, 60_000);
});

/** Starts a stopped replica again with its own port and environment (gateways keep their target). */
function restartReplica(instance: ServiceInstance): ManagedProcess {
  const logDir = path.dirname(instance.process.logFile);
  const entry = path.join(repoRoot, 'services', instance.name, 'dist', 'main.js');
  return startProcess(`${instance.name}-${instance.replica}`, process.execPath, [...nodeFlags, entry], { logDir, env: instance.env });
}

/** When a gateway logged applying a revocation (the last one since `since`). */
function appliedAt(gateway: ServiceInstance, since: number): number {
  const times = readFileSync(gateway.process.logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('revocation applied to the auth caches'))
    .map((line) => Date.parse((JSON.parse(line) as { time: string }).time))
    .filter((time) => time >= since - 5);
  if (times.length === 0) throw new Error(`${gateway.process.name} logged no revocation since ${since}`);
  return Math.max(...times);
}

/** The sum of a metric's samples whose labels include `labels` (0 when absent). */
async function metric(instance: ServiceInstance, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${instance.opsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    if (Object.entries(labels).every(([key, value]) => (match[2] ?? '').includes(`${key}="${value}"`))) sum += Number(match[3]);
  }
  return sum;
}

async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(50);
  }
}
