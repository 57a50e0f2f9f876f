import type { Stack } from '@tws/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countBy, instancesOf, isOk, sleep, stackWorkspace, startFaultStack, timedCall, type TimedResponse } from '../support/faults/stack.js';

/**
 * Postgres goes away for a few seconds under a steady load of reads and writes through the gateway.
 * The tasks service's /readyz turns red while it is gone and green again after, the services
 * reconnect by themselves, and no request hangs: each one ends within the gateway's gRPC deadline
 * (+ a margin) with either success or 503 (never a 500, never a stuck connection).
 */
const DEADLINE_MS = 5_000;
const CLIENT_LIMIT_MS = DEADLINE_MS + 3_000;
const DOWN_MS = 4_000;

describe('Postgres restart', () => {
  let stack: Stack | undefined;

  beforeAll(async () => {
    // Rate limits are not under test here: the load loop may outrun one key's bucket.
    stack = await startFaultStack('faults-postgres', { extraEnv: { GRPC_DEADLINE_MS: String(DEADLINE_MS), RATE_LIMIT_PER_SECOND: '0' } });
  }, 300_000);
  afterAll(async () => {
    await stack?.stop();
  }, 120_000);

  it('services reconnect, tasks /readyz goes red then green, and no request hangs', async (context) => {
    const postgres = stack!.infra.postgres;
    if (!postgres) context.skip('Postgres is external (DATABASE_URL): this test needs to stop the server');
    const gateway = stack!.services.gatewayUrl;
    const tasksOps = instancesOf(stack!, 'tasks')[0]!.opsUrl;
    const ws = await stackWorkspace(stack!);
    const key = ws.apiKey.key;
    const project = (await timedCall(gateway, key, 'POST', '/v1/projects', { name: 'Outage' })).body as { id: string; defaultListId: string };
    expect(project.id).toBeTruthy();

    // Load: 4 clients alternating a write and two reads, each waiting for its answer before the next.
    const responses: Array<TimedResponse & { op: string }> = [];
    let loading = true;
    const client = async (index: number): Promise<void> => {
      for (let n = 0; loading; n++) {
        const op = ['create', 'list', 'workspace'][n % 3]!;
        const response =
          op === 'create'
            ? await timedCall(gateway, key, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: `c${index}-${n}` }, CLIENT_LIMIT_MS)
            : op === 'list'
              ? await timedCall(gateway, key, 'GET', `/v1/projects/${project.id}/tasks`, undefined, CLIENT_LIMIT_MS)
              : await timedCall(gateway, key, 'GET', '/v1/workspace', undefined, CLIENT_LIMIT_MS);
        responses.push({ ...response, op });
        if (response.status !== 200 && response.status !== 201) await sleep(50);
      }
    };
    // Readiness of the tasks service, sampled every 100 ms.
    const readiness: Array<{ at: number; ok: boolean }> = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        readiness.push({ at: Date.now(), ok: await isOk(`${tasksOps}/readyz`, 1_500) });
        await sleep(100);
      }
    })();
    const clients = [0, 1, 2, 3].map((index) => client(index));

    await sleep(1_500);
    const stoppedAt = Date.now();
    await postgres!.stopServer();
    await sleep(DOWN_MS);
    await postgres!.startServer();
    const startedAt = Date.now();
    // Wait for green, then keep the load on a little longer to see the service serve again.
    for (let waited = 0; waited < 30_000 && !readiness.slice(-1)[0]?.ok; waited += 100) await sleep(100);
    await sleep(3_000);
    loading = false;
    sampling = false;
    await Promise.all(clients);
    await sampler;

    const firstRed = readiness.find((sample) => sample.at >= stoppedAt && !sample.ok);
    const greenAgain = readiness.find((sample) => sample.at >= startedAt && sample.ok);
    const hung = responses.filter((response) => response.status === -1);
    const overDeadline = responses.filter((response) => response.ms > DEADLINE_MS + 2_000);
    const unexpected = responses.filter((response) => ![200, 201, 503].includes(response.status));
    const during = responses.filter((response) => response.startedAt >= stoppedAt && response.startedAt < startedAt);
    const afterRecovery = responses.filter((response) => greenAgain && response.startedAt >= greenAgain.at + 1_000);
    const slowest = Math.max(...responses.map((response) => response.ms));
    console.log(
      `postgres restart (down ${DOWN_MS / 1000} s): tasks readyz red after ${firstRed ? ((firstRed.at - stoppedAt) / 1000).toFixed(1) : '∞'} s, ` +
        `green ${greenAgain ? ((greenAgain.at - startedAt) / 1000).toFixed(1) : '∞'} s after Postgres was back; ` +
        `${responses.length} requests ${JSON.stringify(countBy(responses, (response) => response.status))}, ` +
        `${during.length} during the outage ${JSON.stringify(countBy(during, (response) => response.status))}, ` +
        `${hung.length} hung, slowest ${(slowest / 1000).toFixed(1)} s (deadline ${DEADLINE_MS / 1000} s)`,
    );
    const sample = (list: typeof responses) => list.slice(0, 5).map((response) => `${response.op} ${response.status} ${response.ms} ms ${response.text.slice(0, 120)} ${response.error ?? ''}`);

    // No service died on the way (a crash is what keeps /readyz red: nothing restarts processes here).
    const crashed = stack!.services.instances.filter((instance) => instance.process.child.exitCode !== null || instance.process.child.signalCode !== null);
    expect(crashed.map((instance) => `${instance.name} exited with ${instance.process.child.exitCode}; see ${instance.process.logFile}`)).toEqual([]);
    expect(firstRed, 'tasks /readyz never went red').toBeDefined();
    expect(greenAgain, 'tasks /readyz never went green again').toBeDefined();
    expect(sample(hung)).toEqual([]);
    expect(sample(unexpected)).toEqual([]);
    expect(sample(overDeadline)).toEqual([]);
    // Every 503 is the contract's error shape.
    for (const response of responses.filter((candidate) => candidate.status === 503)) {
      expect(response.body).toStrictEqual({ error: expect.stringMatching(/\S/) });
    }
    // After recovery everything succeeds again: the pools dropped the broken connections.
    expect(afterRecovery.length).toBeGreaterThan(0);
    expect(sample(afterRecovery.filter((response) => response.status >= 300))).toEqual([]);
    // And the other backends are ready again too.
    for (const instance of stack!.services.instances.filter((candidate) => candidate.name !== 'gateway')) {
      expect(await isOk(`${instance.opsUrl}/readyz`), `${instance.name} /readyz`).toBe(true);
    }
    expect(await isOk(`${gateway}/readyz`)).toBe(true);
  }, 120_000);
});
