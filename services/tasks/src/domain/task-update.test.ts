import { DomainError } from '@tws/common';
import { describe, expect, it } from 'vitest';
import { planTaskUpdate, type TaskState } from './task-update.js';

const ids = { todo: 'status-todo', done: 'status-done', custom: 'status-progress' };
const system = (type: 'todo' | 'done'): string => ids[type];

const open: TaskState = {
  name: 'Write docs',
  listId: 'section-a',
  isCompleted: false,
  statusId: ids.todo,
  assigneeId: null,
  description: null,
};
const completed: TaskState = { ...open, isCompleted: true, statusId: ids.done };

function expectInvalid(run: () => unknown, message: RegExp): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).kind).toBe('invalid_argument');
    expect((error as DomainError).message).toMatch(message);
    return;
  }
  throw new Error('expected an invalid_argument error');
}

describe('planTaskUpdate', () => {
  it('refuses a request without fields', () => {
    expectInvalid(() => planTaskUpdate(open, {}, system), /^no fields to update$/);
  });

  it('isCompleted true selects the done status and emits task.completed', () => {
    const plan = planTaskUpdate(open, { isCompleted: true }, system);
    expect(plan.next).toMatchObject({ isCompleted: true, statusId: ids.done });
    expect(plan.event).toBe('task.completed');
  });

  it('isCompleted false selects the todo status and emits task.updated (un-completing)', () => {
    const plan = planTaskUpdate(completed, { isCompleted: false }, system);
    expect(plan.next).toMatchObject({ isCompleted: false, statusId: ids.todo });
    expect(plan.event).toBe('task.updated');
  });

  it('a done status completes the task', () => {
    const plan = planTaskUpdate(open, { status: { id: ids.done, systemType: 'done' } }, system);
    expect(plan.next).toMatchObject({ isCompleted: true, statusId: ids.done });
    expect(plan.event).toBe('task.completed');
  });

  it('a custom status un-completes the task', () => {
    const plan = planTaskUpdate(completed, { status: { id: ids.custom, systemType: null } }, system);
    expect(plan.next).toMatchObject({ isCompleted: false, statusId: ids.custom });
    expect(plan.event).toBe('task.updated');
  });

  it('a custom status on an open task is an update', () => {
    const plan = planTaskUpdate(open, { status: { id: ids.custom, systemType: null } }, system);
    expect(plan.changed).toEqual(['statusId']);
    expect(plan.event).toBe('task.updated');
  });

  it('agreeing isCompleted and statusId are accepted', () => {
    const plan = planTaskUpdate(open, { isCompleted: true, status: { id: ids.done, systemType: 'done' } }, system);
    expect(plan.event).toBe('task.completed');
    expect(planTaskUpdate(completed, { isCompleted: false, status: { id: ids.custom, systemType: null } }, system).event).toBe(
      'task.updated',
    );
  });

  it('disagreeing isCompleted and statusId are invalid', () => {
    expectInvalid(() => planTaskUpdate(open, { isCompleted: false, status: { id: ids.done, systemType: 'done' } }, system), /disagrees/);
    expectInvalid(() => planTaskUpdate(open, { isCompleted: true, status: { id: ids.todo, systemType: 'todo' } }, system), /disagrees/);
    expectInvalid(() => planTaskUpdate(open, { isCompleted: true, status: { id: ids.custom, systemType: null } }, system), /custom/);
  });

  it('a change to the same values is no change and emits nothing', () => {
    const plan = planTaskUpdate(open, { name: open.name, listId: open.listId, isCompleted: false, assigneeId: null }, system);
    expect(plan.changed).toEqual([]);
    expect(plan.event).toBeNull();
    expect(planTaskUpdate(completed, { isCompleted: true }, system).event).toBeNull();
    expect(planTaskUpdate(completed, { status: { id: ids.done, systemType: 'done' } }, system).event).toBeNull();
  });

  it('renaming a completed task is an update, not a completion', () => {
    const plan = planTaskUpdate(completed, { name: 'Renamed' }, system);
    expect(plan.event).toBe('task.updated');
    expect(plan.next.isCompleted).toBe(true);
  });

  it('completing and renaming at once is a completion', () => {
    const plan = planTaskUpdate(open, { name: 'Renamed', isCompleted: true }, system);
    expect(plan.changed.sort()).toEqual(['isCompleted', 'name', 'statusId']);
    expect(plan.event).toBe('task.completed');
  });

  it('compares descriptions by value', () => {
    const nodes = [{ type: 'paragraph', children: [{ text: 'hello' }] }];
    const withDescription = { ...open, description: nodes };
    expect(planTaskUpdate(withDescription, { description: structuredClone(nodes) }, system).event).toBeNull();
    expect(planTaskUpdate(withDescription, { description: null }, system).changed).toEqual(['description']);
    expect(planTaskUpdate(open, { description: nodes }, system).event).toBe('task.updated');
  });

  it('moving, assigning and unassigning are updates', () => {
    expect(planTaskUpdate(open, { listId: 'section-b' }, system).changed).toEqual(['listId']);
    const assigned = planTaskUpdate(open, { assigneeId: 'user-1' }, system);
    expect(assigned.event).toBe('task.updated');
    expect(planTaskUpdate(assigned.next, { assigneeId: null }, system).changed).toEqual(['assigneeId']);
  });
});
