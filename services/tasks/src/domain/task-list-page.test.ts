import { describe, expect, it } from 'vitest';
import type { ListTaskPageRequest__Output } from '@tws/proto-types/generated/tasks/v1/ListTaskPageRequest';
import { taskListFilters } from './task-list-page.js';

const id = 'A1D2C3B4-0000-4000-8000-000000000001';
const request = (extra: Partial<ListTaskPageRequest__Output>): ListTaskPageRequest__Output => ({
  workspaceId: id,
  projectId: id,
  limit: 10,
  after: null,
  unassigned: false,
  ...extra,
});

describe('task list filters', () => {
  it('none sent: no condition', () => {
    expect(taskListFilters(request({}))).toEqual({});
  });

  it('maps each filter, ids lower-cased, the time parsed', () => {
    expect(taskListFilters(request({ isCompleted: false, statusId: id, listId: id, assigneeId: id, updatedSince: '2026-11-25T01:02:03.5+01:00' }))).toEqual({
      isCompleted: false,
      statusId: id.toLowerCase(),
      listId: id.toLowerCase(),
      assigneeId: id.toLowerCase(),
      updatedSince: new Date('2026-11-25T00:02:03.500Z'),
    });
    expect(taskListFilters(request({ unassigned: true }))).toEqual({ assigneeId: null });
  });

  it('refuses malformed ids and times, and assignee with unassigned', () => {
    expect(() => taskListFilters(request({ statusId: 'x' }))).toThrow(/statusId/);
    expect(() => taskListFilters(request({ listId: `${id}0` }))).toThrow(/listId/);
    expect(() => taskListFilters(request({ assigneeId: 'none' }))).toThrow(/assigneeId/);
    expect(() => taskListFilters(request({ unassigned: true, assigneeId: id }))).toThrow(/exclude/);
    for (const time of ['2026-11-25', '2026-11-25T01:02:03', '2026-13-45T01:02:03Z', 'now']) {
      expect(() => taskListFilters(request({ updatedSince: time })), time).toThrow(/updatedSince/);
    }
  });
});
