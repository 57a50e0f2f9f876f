import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../events/task-event.js';
import type { Queryable } from './queryable.js';
import type { NewTask, SectionKey } from './task-changes.js';
import { TaskCreationBatcher } from './task-creation-batcher.js';

interface Call {
  ids: string[];
  finish: (error?: Error) => void;
}

/** A database whose create_tasks calls complete when the test says so; every item is created. */
function fakeDatabase(): { db: Queryable; calls: Call[] } {
  const calls: Call[] = [];
  let nextNumber = 1;
  const query = (config: { values: unknown[] }): Promise<{ rows: Array<{ item_outcome: string; item_number: number }> }> =>
    new Promise((resolve, reject) => {
      const ids = config.values[4] as string[];
      calls.push({
        ids,
        finish: (error) => (error ? reject(error) : resolve({ rows: ids.map(() => ({ item_outcome: 'created', item_number: nextNumber++ })) })),
      });
    });
  return { db: { query } as unknown as Queryable, calls };
}

const section: SectionKey = { workspaceId: 'w', projectId: 'p', sectionId: 's1' };
const item = (id: string): NewTask => ({ id, name: id, assigneeId: null, createdAt: new Date(0), eventId: `e-${id}`, event: {} as TaskEvent });
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TaskCreationBatcher', () => {
  it('sends a lone creation at once and the ones that arrive meanwhile together in the next call', async () => {
    const { db, calls } = fakeDatabase();
    const batcher = new TaskCreationBatcher(db, 300);
    const first = batcher.create(section, item('a'));
    expect(calls.map((call) => call.ids)).toStrictEqual([['a']]);
    const later = ['b', 'c', 'd'].map((id) => batcher.create(section, item(id)));
    expect(calls).toHaveLength(1);

    calls[0]!.finish();
    expect(await first).toStrictEqual({ outcome: 'created', number: 1 });
    await settle();
    expect(calls.map((call) => call.ids)).toStrictEqual([['a'], ['b', 'c', 'd']]);
    calls[1]!.finish();
    expect(await Promise.all(later)).toStrictEqual([2, 3, 4].map((number) => ({ outcome: 'created', number })));

    // Idle again: the next creation goes out at once.
    void batcher.create(section, item('e'));
    expect(calls.map((call) => call.ids).at(-1)).toStrictEqual(['e']);
  });

  it('keeps sections apart and caps a call at maxBatch items', async () => {
    const { db, calls } = fakeDatabase();
    const batcher = new TaskCreationBatcher(db, 300, 2);
    void batcher.create(section, item('a'));
    void batcher.create({ ...section, sectionId: 's2' }, item('x'));
    for (const id of ['b', 'c', 'd']) void batcher.create(section, item(id));
    expect(calls.map((call) => call.ids)).toStrictEqual([['a'], ['x']]);

    calls[0]!.finish();
    await settle();
    calls[2]!.finish();
    await settle();
    expect(calls.map((call) => call.ids)).toStrictEqual([['a'], ['x'], ['b', 'c'], ['d']]);
  });

  it('fails only the creations of a failed call', async () => {
    const { db, calls } = fakeDatabase();
    const batcher = new TaskCreationBatcher(db, 300);
    const first = batcher.create(section, item('a'));
    const second = batcher.create(section, item('b'));
    calls[0]!.finish(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settle();
    calls[1]!.finish();
    expect(await second).toMatchObject({ outcome: 'created' });
  });
});
