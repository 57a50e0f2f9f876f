import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError } from '@tws/common';
import type { Role__Output } from '@tws/proto-types/generated/tasks/v1/Role';
import type { TasksApi } from '../clients/tasks.js';
import { sentences, UserFacingError } from './errors.js';

export type Role = 'owner' | 'member' | 'guest';

/** One workspace of the signed-in person. */
export interface WorkspaceMembership {
  workspaceId: string;
  urlId: string;
  name: string;
  userId: string;
  role: Role;
}

const roles: Partial<Record<Role__Output, Role>> = { ROLE_OWNER: 'owner', ROLE_MEMBER: 'member', ROLE_GUEST: 'guest' };

/**
 * Who a person is: the members whose email equals the provider's verified email (DESIGN.md), asked
 * of the tasks service on every page, so a member removed from a workspace loses it at once.
 */
export class People {
  constructor(private readonly tasks: TasksApi) {}

  async workspacesOf(email: string): Promise<WorkspaceMembership[]> {
    let response;
    try {
      response = await this.tasks.ListMembershipsByEmail({ email });
    } catch (error) {
      // An address the tasks service does not take for an email belongs to no member.
      if (isGrpcError(error) && error.code === GrpcStatus.INVALID_ARGUMENT) return [];
      throw new UserFacingError(503, 'Workspaces unavailable', `Your workspaces could not be loaded just now. ${sentences.tryAgainLater}`, {}, { cause: error });
    }
    return response.memberships.flatMap((membership) => {
      const role = roles[membership.role];
      const workspace = membership.workspace;
      if (!role || !workspace) return [];
      return [{ workspaceId: workspace.id, urlId: workspace.urlId, name: workspace.name, userId: membership.userId, role }];
    });
  }
}

/** The acting person of a tasks.v1 settings/labels/task-page call: the workspace and their user id in it. */
export const acting = (workspace: WorkspaceMembership): { workspaceId: string; userId: string } => ({ workspaceId: workspace.workspaceId, userId: workspace.userId });
