import type { Stack } from '@tws/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countBy, instancesOf, isOk, sleep, stackWorkspace, startFaultStack, timedCall } from '../support/faults/stack.js';
import { slowJsonRequest, type SlowResult } from '../support/faults/slow-request.js';

/**
 * A gateway replica gets SIGTERM while requests are in flight on it (their bodies still arriving):
 * it stops accepting, its /readyz goes red, and every request it had accepted gets a complete
 * answer (the task really created), before it exits. The other replica keeps serving throughout.
 */
describe('gateway SIGTERM under load', () => {
  let stack: Stack | undefined;

  beforeAll(async () => {
    // Rate limits off: the point is in-flight requests, not buckets.
    stack = await startFaultStack('faults-gateway', { extraEnv: { RATE_LIMIT_PER_SECOND: '0' } });
  }, 300_000);
  afterAll(async () => {
    await stack?.stop();
  }, 120_000);

  it('every request the replica had accepted completes; it exits after draining', async () => {
    const first = stack!.services.gatewayUrl;
    const ws = await stackWorkspace(stack!);
    const key = ws.apiKey.key;
    const project = (await timedCall(first, key, 'POST', '/v1/projects', { name: 'Drain' })).body as { id: string; defaultListId: string };
    const second = await stack!.services.startReplica('gateway');
    const doomed = second.opsUrl;
    expect(await isOk(`${doomed}/readyz`)).toBe(true);

    // 3 waves of 20 slow requests (each body takes 1.5 s to arrive); SIGTERM lands mid-way through wave 2.
    const BODY_MS = 1_500;
    const results: Array<SlowResult & { wave: number }> = [];
    let terminatedAt = 0;
    let exitedAt = 0;
    let readyRedAt = 0;
    const wave = async (index: number): Promise<void> => {
      let connected = 0;
      const all = Array.from({ length: 20 }, (_, n) =>
        slowJsonRequest(
          doomed,
          'POST',
          '/v1/tasks',
          { 'x-api-key': key },
          { projectId: project.id, listId: project.defaultListId, name: `wave ${index} #${n}` },
          BODY_MS,
          () => (connected += 1),
        ).then((result) => results.push({ ...result, wave: index })),
      );
      if (index === 1) {
        // Everyone connected and mid-body: terminate.
        for (let waited = 0; connected < 20 && waited < 5_000; waited += 20) await sleep(20);
        await sleep(300);
        terminatedAt = Date.now();
        const gateway = instancesOf(stack!, 'gateway').find((instance) => instance.opsUrl === doomed)!;
        gateway.process.child.kill('SIGTERM');
        void gateway.process.exited.then(() => (exitedAt = Date.now()));
        void (async () => {
          for (let waited = 0; waited < 5_000 && !readyRedAt; waited += 50) {
            if (!(await isOk(`${doomed}/readyz`, 500))) readyRedAt = Date.now();
            await sleep(50);
          }
        })();
      }
      await Promise.all(all);
    };
    await wave(0);
    await wave(1);
    // Wave 2, after the SIGTERM: these are refused (not accepted) or served; never cut half-way.
    await wave(2);
    for (let waited = 0; waited < 30_000 && !exitedAt; waited += 100) await sleep(100);

    const accepted = results.filter((result) => result.connectedAt > 0 && result.connectedAt < terminatedAt);
    const incomplete = accepted.filter((result) => result.status !== 201);
    const late = results.filter((result) => result.wave === 2);
    // The tasks really exist: every 201 is one task (the other replica lists them).
    const listed = (await timedCall(first, key, 'GET', `/v1/projects/${project.id}/tasks`)).body as Array<{ name: string }>;
    const created = results.filter((result) => result.status === 201);
    const drainMs = Math.max(...accepted.map((result) => result.endedAt)) - terminatedAt;
    console.log(
      `gateway SIGTERM: ${accepted.length} accepted requests in flight or done before the signal → ${JSON.stringify(countBy(accepted, (result) => result.status))}; ` +
        `last one answered ${(drainMs / 1000).toFixed(1)} s after SIGTERM; readyz red after ${readyRedAt ? readyRedAt - terminatedAt : '∞'} ms; ` +
        `process exited ${exitedAt ? ((exitedAt - terminatedAt) / 1000).toFixed(1) : '∞'} s after SIGTERM; ` +
        `${late.length} requests after the signal → ${JSON.stringify(countBy(late, (result) => result.status || result.error || 0))}; ` +
        `${listed.length} tasks listed for ${created.length} 201s`,
    );
    expect(accepted.length).toBe(40);
    expect(incomplete.map((result) => `${result.status} ${result.error ?? result.text.slice(0, 100)}`)).toEqual([]);
    // Those after the signal were refused at connect (status 0, ECONNREFUSED) or fully answered.
    for (const result of late) {
      if (result.status === 0) expect(result.connectedAt, result.error).toBe(0);
      else expect([201, 503]).toContain(result.status);
    }
    expect(exitedAt, 'the replica did not exit after draining').toBeGreaterThan(0);
    expect(readyRedAt, 'readyz of the terminating replica never went red').toBeGreaterThan(0);
    expect(listed.length).toBe(created.length);
    expect(new Set(listed.map((task) => task.name)).size).toBe(listed.length);
    expect(await isOk(`${first}/readyz`)).toBe(true);
  }, 120_000);
});
