import type * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import type { TasksServiceClient } from '@tws/proto-types/generated/tasks/v1/TasksService';

/** The unary RPCs of tasks.v1.TasksService the gateway calls. */
const rpcNames = [
  'AuthenticateApiKey',
  'GetMembership',
  'GetWorkspace',
  'ListMembers',
  'ListStatuses',
  'ListProjects',
  'CreateProject',
  'UpdateProject',
  'ListSections',
  'CreateSection',
  'UpdateSection',
  'ListTasks',
  'GetTasks',
  'CreateTask',
  'UpdateTask',
  'DeleteTask',
  'CreateComment',
  'DeleteComment',
] as const satisfies readonly (keyof TasksServiceClient)[];

type RpcName = (typeof rpcNames)[number];
// The generated clients' last overload is `(request, callback)`; conditional types read that one.
type RequestOf<M> = M extends (request: infer Req, callback: grpc.requestCallback<infer _Res>) => grpc.ClientUnaryCall ? Req : never;
type ResponseOf<M> = M extends (request: infer _Req, callback: grpc.requestCallback<infer Res>) => grpc.ClientUnaryCall ? Res : never;

/** Promise-returning TasksService calls with the gateway's deadline: `await tasks.GetWorkspace({ … })`. */
export type TasksApi = {
  [Name in RpcName]: (request: RequestOf<TasksServiceClient[Name]>) => Promise<ResponseOf<TasksServiceClient[Name]>>;
};

export function createTasksApi(client: TasksServiceClient, deadlineMs: number): TasksApi {
  const api: Partial<Record<RpcName, (request: never) => Promise<unknown>>> = {};
  for (const name of rpcNames) {
    const method = client[name] as (request: unknown, callback: grpc.requestCallback<unknown>) => grpc.ClientUnaryCall;
    api[name] = (request: unknown) => callUnary(client, method, request, { deadlineMs });
  }
  return api as TasksApi;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The tasks service, promisified, with the configured deadline (GRPC_DEADLINE_MS). */
    tasksApi: TasksApi;
  }
}
