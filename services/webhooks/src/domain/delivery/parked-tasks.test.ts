import { describe, expect, it } from 'vitest';
import { ParkedTasks } from './parked-tasks.js';

describe('ParkedTasks: what this replica parked, per endpoint and task', () => {
  it('answers per task: a park still committing counts as now, a committed one from when it ended', () => {
    const parked = new ParkedTasks();
    expect(parked.since('e1', 't1')).toBe(Number.NEGATIVE_INFINITY);
    const ended = parked.parking('e1', 't1');
    expect(parked.since('e1', 't1')).toBe(Number.POSITIVE_INFINITY);
    // Another task of the endpoint, and the task at another endpoint, are not held back.
    expect(parked.since('e1', 't2')).toBe(Number.NEGATIVE_INFINITY);
    expect(parked.since('e2', 't1')).toBe(Number.NEGATIVE_INFINITY);
    const before = Date.now();
    ended();
    expect(parked.since('e1', 't1')).toBeGreaterThanOrEqual(before);
    expect(parked.since('e1', 't1')).toBeLessThanOrEqual(Date.now());
  });

  it('stays "committing" while any of two parks of one task does, whichever ends first', () => {
    const parked = new ParkedTasks();
    const first = parked.parking('e1', 't1');
    const second = parked.parking('e1', 't1');
    first();
    expect(parked.since('e1', 't1')).toBe(Number.POSITIVE_INFINITY);
    second();
    expect(parked.since('e1', 't1')).toBeLessThan(Number.POSITIVE_INFINITY);
    // A park the fan-out committed (created parked) never moves the time back.
    const at = parked.since('e1', 't1');
    parked.parked('e1', 't1', at - 1_000);
    expect(parked.since('e1', 't1')).toBe(at);
    parked.parked('e1', 't1', at + 5);
    expect(parked.since('e1', 't1')).toBe(at + 5);
  });

  it('forgets an endpoint\'s notes once the drainer, in a query begun after them, found no backlog; any note after a minute; never one committing', () => {
    const parked = new ParkedTasks();
    parked.parked('drained', 't1', 1_000);
    parked.parked('drained', 't2', 3_000);
    parked.parked('busy', 'old', 1_000);
    parked.parked('busy', 'young', 50_000);
    const committing = parked.parking('drained', 't3');
    parked.forget(new Set(['busy']), 2_000, 62_000);
    // The drained endpoint: t1 was before the drainer's query; t2 after it (it may be parked still); t3 is committing.
    expect(parked.since('drained', 't1')).toBe(Number.NEGATIVE_INFINITY);
    expect(parked.since('drained', 't2')).toBe(3_000);
    expect(parked.since('drained', 't3')).toBe(Number.POSITIVE_INFINITY);
    // The endpoint with a backlog keeps its notes for a minute.
    expect(parked.since('busy', 'old')).toBe(Number.NEGATIVE_INFINITY);
    expect(parked.since('busy', 'young')).toBe(50_000);
    expect(parked.size).toBe(3);
    committing();
    parked.forget(new Set(), Date.now() + 1, Date.now() + 1);
    expect(parked.size).toBe(0);
  });
});
