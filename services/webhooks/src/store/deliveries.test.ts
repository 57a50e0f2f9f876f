import { randomUUID } from 'node:crypto';
import { createPool, type Pool } from '@tws/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeliveryStore, type IncomingEvent } from './deliveries.js';

/** Against the test stack's Postgres (schema webhooks), in a workspace of its own. */
describe('DeliveryStore.fanOut', () => {
  let pool: Pool;
  let store: DeliveryStore;

  beforeAll(() => {
    pool = createPool({ url: inject('stack').databaseUrl, schema: 'webhooks', applicationName: 'webhooks-fan-out-test', max: 2 });
    store = new DeliveryStore(pool);
  });
  afterAll(async () => {
    await pool.end();
  });

  it('gives every delivery of a batch the payload of its own event, in event order then endpoint order, also when fanned out again', async () => {
    const workspaceId = `fan-out-${randomUUID()}`;
    const endpoints = [randomUUID(), randomUUID(), randomUUID()];
    for (const [index, id] of endpoints.entries()) {
      await pool.query(
        `INSERT INTO endpoints (id, workspace_id, url, events, secret_ciphertext, created_at)
         VALUES ($1, $2, $3, '{task.updated}', '\\x00', now() + make_interval(secs => $4))`,
        [id, workspaceId, `https://e${index}.example/`, index],
      );
    }
    const events: IncomingEvent[] = Array.from({ length: 7 }, (_, index) => {
      const id = `evt_${randomUUID()}`;
      return { id, workspaceId, type: 'task.updated', taskId: `task-${index % 3}`, payload: Buffer.from(JSON.stringify({ id, n: index })) };
    });

    // The second call finds the deliveries the first one created (a redelivered Kafka message).
    for (const input of [events, [...events].reverse()]) {
      const { work, queued } = await store.fanOut(input);
      expect(queued).toEqual([]);
      expect(work.map((item) => [item.eventId, item.endpointId])).toEqual(
        input.flatMap((event) => endpoints.map((endpointId) => [event.id, endpointId])),
      );
      for (const item of work) {
        const event = events.find((candidate) => candidate.id === item.eventId)!;
        expect(item.payload.equals(event.payload)).toBe(true);
        expect(item).toMatchObject({ workspaceId, taskId: event.taskId, eventType: 'task.updated', state: 'pending', nextAttempt: 1 });
      }
    }
    // An endpoint deleted since: its deliveries still come back (the pipeline cancels them), marked so.
    await pool.query('UPDATE endpoints SET deleted_at = now() WHERE id = $1', [endpoints[1]]);
    const { work: again } = await store.fanOut(events.slice(0, 2));
    expect(again.map((item) => [item.eventId, item.endpointId, item.endpointDeleted])).toEqual(
      events.slice(0, 2).flatMap((event) => endpoints.map((endpointId) => [event.id, endpointId, endpointId === endpoints[1]])),
    );
    // The delivery log is newest first in the batch's (Kafka) order, whatever the random event ids.
    for (const endpointId of endpoints) {
      const log = await store.listForEndpoint(endpointId, 20, undefined);
      expect(log.map((entry) => entry.eventId)).toEqual([...events].reverse().map((event) => event.id));
    }
  });
});
