import * as grpc from '@grpc/grpc-js';
import { grpcClientOptions, unaryApi, type GrpcClientMetrics, type UnaryApi } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import type { TasksServiceClient } from '@tws/proto-types/generated/tasks/v1/TasksService';

/** The unary RPCs the web service calls on tasks.v1.TasksService. */
const tasksRpcs = ['ListMembershipsByEmail'] as const;

export type TasksApi = UnaryApi<TasksServiceClient, (typeof tasksRpcs)[number]>;

/** One channel to the tasks service (lazily connected by grpc-js), with the shared client options and metrics. */
export function connectTasks(target: string, deadlineMs: number, metrics: GrpcClientMetrics): { api: TasksApi; close(): void } {
  const client = new (loadTasksProto().tasks.v1.TasksService)(
    target,
    grpc.credentials.createInsecure(),
    grpcClientOptions('tasks.v1.TasksService', metrics),
  );
  return { api: unaryApi(client, tasksRpcs, deadlineMs), close: () => client.close() };
}
