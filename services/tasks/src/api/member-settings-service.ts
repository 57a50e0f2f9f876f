import { unary } from '@tws/common';
import type { ActingPerson__Output } from '@tws/proto-types/generated/tasks/v1/ActingPerson';
import type { SettingsServiceHandlers } from '@tws/proto-types/generated/tasks/v1/SettingsService';
import type { WorkspaceMemberSummary } from '@tws/proto-types/generated/tasks/v1/WorkspaceMemberSummary';
import type { ActingPerson } from '../domain/api-key-settings.js';
import * as members from '../domain/member-settings.js';
import type { Revocations } from '../domain/revocation-publisher.js';
import type { MemberSummary } from '../store/members.js';
import { memberMessage, roleFromProto } from './mappers.js';
import type { HandlerDeps } from './tasks-service.js';

const acting = (message: ActingPerson__Output | null): ActingPerson => ({
  workspaceId: message?.workspaceId ?? '',
  userId: message?.userId ?? '',
});

const summaryMessage = (summary: MemberSummary): WorkspaceMemberSummary => ({
  member: memberMessage(summary.member),
  joinedAt: summary.joinedAt.toISOString(),
});

type MemberHandlers = Pick<SettingsServiceHandlers, 'ListWorkspaceMembers' | 'AddWorkspaceMember' | 'ChangeMemberRole' | 'RemoveMember'>;

/** The members RPCs of tasks.v1.SettingsService (rules in domain/member-settings.ts). */
export function memberSettingsHandlers({ pool, logger, metrics, revocations }: HandlerDeps & { revocations: Revocations }): MemberHandlers {
  const options = { service: 'tasks.v1.SettingsService', logger, metrics };
  return {
    ListWorkspaceMembers: unary(
      'ListWorkspaceMembers',
      async (request) => {
        const listed = await members.listWorkspaceMembers(pool, acting(request.acting));
        return { members: listed.members.map(summaryMessage), truncated: listed.truncated };
      },
      options,
    ),
    AddWorkspaceMember: unary(
      'AddWorkspaceMember',
      async (request) => {
        const added = await members.addWorkspaceMember(pool, acting(request.acting), request.email, roleFromProto(request.role));
        return { member: summaryMessage(added) };
      },
      options,
    ),
    ChangeMemberRole: unary(
      'ChangeMemberRole',
      async (request) => {
        // Returns once every gateway replica dropped what it cached about the member (bounded wait).
        const changed = await members.changeMemberRole(pool, revocations, acting(request.acting), request.userId, roleFromProto(request.role));
        return { member: summaryMessage(changed.member), revokedApiKeys: changed.revokedApiKeys, confirmed: changed.confirmation.confirmed };
      },
      options,
    ),
    RemoveMember: unary(
      'RemoveMember',
      async (request) => {
        // Returns once every gateway replica refuses the member's keys and tokens (bounded wait).
        const removed = await members.removeMember(pool, revocations, acting(request.acting), request.userId);
        return { userId: request.userId.toLowerCase(), unassignedTasks: removed.unassignedTasks, confirmed: removed.confirmation.confirmed };
      },
      options,
    ),
  };
}
