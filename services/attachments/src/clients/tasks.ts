import * as grpc from '@grpc/grpc-js';
import { DomainError, grpcClientOptions, isGrpcError, notFound, unaryApi, type GrpcClientMetrics } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { planOf, type Plan } from '../domain/limits.js';

/** What the attachments context asks the tasks context: a workspace's plan, whether a task exists. */
export interface TasksPort {
  /** The workspace's plan; NOT_FOUND-kind DomainError when the workspace does not exist. */
  workspacePlan(workspaceId: string): Promise<Plan>;
  /** True when the task exists in that workspace; false on NOT_FOUND; throws on any other failure. */
  taskExists(workspaceId: string, taskId: string): Promise<boolean>;
  close(): void;
}

/** Failures of the tasks service other than NOT_FOUND: retryable ones surface as UNAVAILABLE. */
function translate(error: unknown): unknown {
  if (isGrpcError(error) && (error.code === grpc.status.UNAVAILABLE || error.code === grpc.status.DEADLINE_EXCEEDED)) {
    return new DomainError('unavailable', 'tasks service unavailable, try again');
  }
  return error;
}

export function connectTasks(options: { target: string; deadlineMs: number; metrics?: GrpcClientMetrics }): TasksPort {
  const proto = loadTasksProto();
  const client = new proto.tasks.v1.TasksService(
    options.target,
    grpc.credentials.createInsecure(),
    grpcClientOptions('tasks.v1.TasksService', options.metrics),
  );
  const api = unaryApi(client, ['getWorkspace', 'getTasks'], options.deadlineMs);
  return {
    async workspacePlan(workspaceId) {
      try {
        const { workspace } = await api.getWorkspace({ workspaceId });
        if (!workspace) throw new Error('GetWorkspace answered without a workspace');
        return planOf(workspace.plan);
      } catch (error) {
        if (isGrpcError(error) && error.code === grpc.status.NOT_FOUND) throw notFound('workspace not found');
        throw translate(error);
      }
    },
    async taskExists(workspaceId, taskId) {
      try {
        const { tasksJson } = await api.getTasks({ tasks: [{ workspaceId, id: taskId }] });
        return (tasksJson[0]?.length ?? 0) > 0;
      } catch (error) {
        throw translate(error);
      }
    },
    close: () => client.close(),
  };
}
