import * as grpc from '@grpc/grpc-js';
import { grpcClientOptions, unaryApi, type GrpcClientMetrics, type UnaryApi } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import type { RevocationServiceClient } from '@tws/proto-types/generated/tasks/v1/RevocationService';
import type { LabelsServiceClient } from '@tws/proto-types/generated/tasks/v1/LabelsService';
import type { SettingsServiceClient } from '@tws/proto-types/generated/tasks/v1/SettingsService';
import type { TaskPageServiceClient } from '@tws/proto-types/generated/tasks/v1/TaskPageService';
import type { TasksServiceClient } from '@tws/proto-types/generated/tasks/v1/TasksService';

/** The unary RPCs the web service calls on tasks.v1.TasksService. */
const tasksRpcs = ['ListMembershipsByEmail'] as const;
/** …and on tasks.v1.SettingsService (the workspace settings of the signed-in person). */
const settingsRpcs = ['ListApiKeys', 'CreateApiKey', 'RevokeApiKey', 'ListWorkspaceMembers', 'AddWorkspaceMember', 'ChangeMemberRole', 'RemoveMember'] as const;
/** The task page: tasks.v1.TaskPageService, and the names of statuses, sections and people and adding a comment (TasksService). */
const taskPageRpcs = ['GetTaskByNumber', 'ListComments'] as const;
const taskPageTasksRpcs = ['ListStatuses', 'ListSections', 'ListMembers', 'CreateComment'] as const;

/** …and on tasks.v1.LabelsService (the workspace's labels and the labels on its tasks). */
const labelsRpcs = ['ListLabels', 'CreateLabel', 'UpdateLabel', 'DeleteLabel', 'AddTaskLabel', 'RemoveTaskLabel'] as const;

/** …and on tasks.v1.RevocationService (a grant revoked at the authorization server, pushed to the gateways). */
const revocationRpcs = ['AnnounceGrantRevocation'] as const;

export type RevocationsApi = UnaryApi<RevocationServiceClient, (typeof revocationRpcs)[number]>;
export type TasksApi = UnaryApi<TasksServiceClient, (typeof tasksRpcs)[number]>;
export type SettingsApi = UnaryApi<SettingsServiceClient, (typeof settingsRpcs)[number]>;
export type TaskPageApi = UnaryApi<TaskPageServiceClient, (typeof taskPageRpcs)[number]> &
  UnaryApi<TasksServiceClient, (typeof taskPageTasksRpcs)[number]>;
export type LabelsApi = UnaryApi<LabelsServiceClient, (typeof labelsRpcs)[number]>;

/** Clients of the tasks service's services the app calls (lazily connected by grpc-js), with the shared client options and metrics. */
export function connectTasks(
  target: string,
  deadlineMs: number,
  metrics: GrpcClientMetrics,
): { api: TasksApi; settings: SettingsApi; taskPage: TaskPageApi; labels: LabelsApi; revocations: RevocationsApi; close(): void } {
  const proto = loadTasksProto().tasks.v1;
  const credentials = grpc.credentials.createInsecure();
  const tasks = new proto.TasksService(target, credentials, grpcClientOptions('tasks.v1.TasksService', metrics));
  const settings = new proto.SettingsService(target, credentials, grpcClientOptions('tasks.v1.SettingsService', metrics));
  const taskPage = new proto.TaskPageService(target, credentials, grpcClientOptions('tasks.v1.TaskPageService', metrics));
  const labels = new proto.LabelsService(target, credentials, grpcClientOptions('tasks.v1.LabelsService', metrics));
  const revocations = new proto.RevocationService(target, credentials, grpcClientOptions('tasks.v1.RevocationService', metrics));
  return {
    api: unaryApi(tasks, tasksRpcs, deadlineMs),
    settings: unaryApi(settings, settingsRpcs, deadlineMs),
    taskPage: { ...unaryApi(taskPage, taskPageRpcs, deadlineMs), ...unaryApi(tasks, taskPageTasksRpcs, deadlineMs) },
    labels: unaryApi(labels, labelsRpcs, deadlineMs),
    revocations: unaryApi(revocations, revocationRpcs, deadlineMs),
    close: () => {
      revocations.close();
      tasks.close();
      settings.close();
      taskPage.close();
      labels.close();
    },
  };
}
