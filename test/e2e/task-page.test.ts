/**
 * tasks.v1.TaskPageService through the real tasks service: the task page's reads as the acting
 * person. A task by prefix and number (any case), with its project and labels; comments oldest
 * first; someone who is not a member, another workspace's task, a malformed reference and a task
 * that does not exist all answer the same NOT_FOUND; guests read.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { callUnary, isGrpcError } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';

const stack = inject('stack');
const proto = loadTasksProto().tasks.v1;
const insecure = grpc.credentials.createInsecure();
const tasks = new proto.TasksService(stack.tasksGrpcTarget, insecure);
const admin = new proto.AdminService(stack.tasksGrpcTarget, insecure);
const taskPage = new proto.TaskPageService(stack.tasksGrpcTarget, insecure);

const unique = () => `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

interface Made {
  workspaceId: string;
  ownerId: string;
  guestId: string;
  prefix: string;
  taskId: string;
  number: number;
}

async function makeWorkspace(): Promise<Made> {
  const created = await callUnary(admin, admin.CreateWorkspace, { name: `Task page RPC ${unique()}`, plan: 'PLAN_FREE', ownerName: 'Owner', ownerEmail: `tp-owner-${unique()}@example.com` });
  const workspaceId = created.workspace!.id;
  const guest = await callUnary(admin, admin.AddMember, { workspaceId, email: `tp-guest-${unique()}@example.com`, name: 'Guest', role: 'ROLE_GUEST' });
  const project = await callUnary(tasks, tasks.CreateProject, { workspaceId, name: 'Rocket' });
  const prefix = (await callUnary(tasks, tasks.ListProjects, { workspaceId })).projects.find((candidate) => candidate.id === project.id)!.taskPrefix;
  const task = await callUnary(tasks, tasks.CreateTask, { workspaceId, projectId: project.id, listId: project.defaultListId, name: 'Launch' });
  return { workspaceId, ownerId: created.owner!.userId, guestId: guest.member!.userId, prefix, taskId: task.id, number: task.number };
}

let mine: Made;
let theirs: Made;

beforeAll(async () => {
  [mine, theirs] = await Promise.all([makeWorkspace(), makeWorkspace()]);
});
afterAll(() => {
  tasks.close();
  admin.close();
  taskPage.close();
});

const byNumber = (acting: { workspaceId: string; userId: string }, taskPrefix: string, number: number) =>
  callUnary(taskPage, taskPage.GetTaskByNumber, { acting, taskPrefix, number });

/** The gRPC status code of a call (started here, so no rejection is left unhandled). */
async function codeOf(call: () => Promise<unknown>): Promise<number | 'ok'> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    if (isGrpcError(error)) return error.code;
    throw error;
  }
}

describe('TaskPageService', () => {
  it('GetTaskByNumber: the task with its project, for owners and guests, the prefix in any case', async () => {
    const owner = { workspaceId: mine.workspaceId, userId: mine.ownerId };
    const found = await byNumber(owner, mine.prefix, mine.number);
    expect(found.task).toMatchObject({ id: mine.taskId, number: mine.number, name: 'Launch', isCompleted: false, labels: [] });
    expect(found.project).toMatchObject({ name: 'Rocket', taskPrefix: mine.prefix });
    expect((await byNumber(owner, mine.prefix.toLowerCase(), mine.number)).task?.id).toBe(mine.taskId);
    expect((await byNumber({ workspaceId: mine.workspaceId, userId: mine.guestId }, mine.prefix, mine.number)).task?.id).toBe(mine.taskId);
  });

  it('the same NOT_FOUND for a non-member, another workspace’s task, a malformed reference and no such task', async () => {
    const owner = { workspaceId: mine.workspaceId, userId: mine.ownerId };
    const cases = [
      () => byNumber({ workspaceId: mine.workspaceId, userId: theirs.ownerId }, mine.prefix, mine.number),
      () => byNumber({ workspaceId: theirs.workspaceId, userId: mine.ownerId }, theirs.prefix, theirs.number),
      () => byNumber(owner, mine.prefix, mine.number + 1000),
      () => byNumber(owner, 'not a prefix', 1),
      () => byNumber(owner, mine.prefix, 0),
      () => byNumber(owner, mine.prefix, -1),
      () => byNumber({ workspaceId: 'nope', userId: mine.ownerId }, mine.prefix, mine.number),
      () => byNumber({ workspaceId: mine.workspaceId, userId: '' }, mine.prefix, mine.number),
    ];
    for (const call of cases) expect(await codeOf(call)).toBe(grpc.status.NOT_FOUND);
  });

  it('ListComments: oldest first, attributed; NOT_FOUND for a non-member or another workspace’s task', async () => {
    for (const text of ['first', 'second **bold**']) {
      await callUnary(tasks, tasks.CreateComment, { workspaceId: mine.workspaceId, taskId: mine.taskId, text, actor: { userId: mine.guestId } });
    }
    const listed = await callUnary(taskPage, taskPage.ListComments, { acting: { workspaceId: mine.workspaceId, userId: mine.ownerId }, taskId: mine.taskId });
    expect(listed.truncated).toBe(false);
    expect(listed.comments.map((comment) => [comment.authorName, comment.authorUserId])).toEqual([
      ['Guest', mine.guestId],
      ['Guest', mine.guestId],
    ]);
    const bodies = listed.comments.map((comment) => JSON.parse(comment.bodyJson) as unknown);
    expect(bodies[0]).toEqual([{ type: 'paragraph', children: [{ type: 'text', text: 'first', children: [] }] }]);
    expect(JSON.stringify(bodies[1])).toContain('"bold":true');
    expect(Date.parse(listed.comments[0]!.createdAt)).toBeLessThanOrEqual(Date.parse(listed.comments[1]!.createdAt));
    const refused = [
      () => callUnary(taskPage, taskPage.ListComments, { acting: { workspaceId: mine.workspaceId, userId: theirs.ownerId }, taskId: mine.taskId }),
      () => callUnary(taskPage, taskPage.ListComments, { acting: { workspaceId: mine.workspaceId, userId: mine.ownerId }, taskId: theirs.taskId }),
      () => callUnary(taskPage, taskPage.ListComments, { acting: { workspaceId: mine.workspaceId, userId: mine.ownerId }, taskId: 'not-a-uuid' }),
    ];
    for (const call of refused) expect(await codeOf(call)).toBe(grpc.status.NOT_FOUND);
    // A task with no comments: an empty list, not NOT_FOUND.
    const empty = await callUnary(taskPage, taskPage.ListComments, { acting: { workspaceId: theirs.workspaceId, userId: theirs.ownerId }, taskId: theirs.taskId });
    expect(empty).toEqual({ comments: [], truncated: false });
  });
});
