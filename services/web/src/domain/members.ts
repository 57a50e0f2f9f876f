import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError } from '@tws/common';
import type { Role__Output } from '@tws/proto-types/generated/tasks/v1/Role';
import type { WorkspaceMemberSummary__Output } from '@tws/proto-types/generated/tasks/v1/WorkspaceMemberSummary';
import type { SettingsApi } from '../clients/tasks.js';
import { sentences, UserFacingError } from './errors.js';
import { acting, type Role, type WorkspaceMembership } from './people.js';

/** One member as the members page lists them. */
export interface MemberRow {
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: string;
}

export const roleOptions = ['owner', 'member', 'guest'] as const satisfies readonly Role[];
/** Longest email the add form takes (the tasks service's bound too). */
export const maxEmailLength = 320;

const roleOf: Partial<Record<Role__Output, Role>> = { ROLE_OWNER: 'owner', ROLE_MEMBER: 'member', ROLE_GUEST: 'guest' };
const roleMessage = { owner: 'ROLE_OWNER', member: 'ROLE_MEMBER', guest: 'ROLE_GUEST' } as const;

export const membersGuestRefusal = (): UserFacingError =>
  new UserFacingError(403, 'Guests cannot see members', 'Guests cannot see or manage the members of a workspace. Ask an owner of this workspace if you need a change.');

const ownersOnlyRefusal = (): UserFacingError =>
  new UserFacingError(403, 'Owners only', 'Only owners can add, change or remove members. Ask an owner of this workspace to make the change.');

function toRow(summary: WorkspaceMemberSummary__Output): MemberRow[] {
  const member = summary.member;
  const role = member ? roleOf[member.role] : undefined;
  if (!member || !role) return [];
  return [{ userId: member.userId, name: member.name, email: member.email, role, joinedAt: summary.joinedAt }];
}

/** A refusal the add form shows at its field rather than as a page of its own. */
export class AddRefused extends Error {
  override readonly name = 'AddRefused';
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The members of the workspace settings, as the signed-in person (their workspace and user id) asks
 * tasks.v1.SettingsService. The rules (owners and members list; owners add, change and remove; the
 * last owner stays) are the tasks service's; this maps its refusals to sentences.
 */
export class Members {
  constructor(
    private readonly settings: SettingsApi,
    private readonly changeDeadlineMs: number,
  ) {}

  async list(workspace: WorkspaceMembership): Promise<{ members: MemberRow[]; truncated: boolean }> {
    try {
      const response = await this.settings.ListWorkspaceMembers({ acting: acting(workspace) });
      return { members: response.members.flatMap(toRow), truncated: response.truncated };
    } catch (error) {
      throw refusal(error, 'The members could not be loaded just now.');
    }
  }

  /** Adds a person by email; AddRefused (shown at the form) when the address is not taken or is a member already. */
  async add(workspace: WorkspaceMembership, email: string, role: Role): Promise<MemberRow> {
    try {
      const response = await this.settings.AddWorkspaceMember({ acting: acting(workspace), email, role: roleMessage[role] });
      const row = response.member ? toRow(response.member)[0] : undefined;
      if (!row) throw new Error('AddWorkspaceMember answered without the member');
      return row;
    } catch (error) {
      if (isGrpcError(error) && error.code === GrpcStatus.ALREADY_EXISTS) {
        throw new AddRefused(409, `${email} is already a member of this workspace. Change their role in the list below instead.`);
      }
      if (isGrpcError(error) && error.code === GrpcStatus.INVALID_ARGUMENT) {
        throw new AddRefused(400, 'Enter a whole email address, such as ada@example.com, then add the member.');
      }
      throw refusal(error, 'The member could not be added just now.');
    }
  }

  async changeRole(workspace: WorkspaceMembership, userId: string, role: Role): Promise<void> {
    try {
      await this.settings.ChangeMemberRole({ acting: acting(workspace), userId, role: roleMessage[role] }, { deadlineMs: this.changeDeadlineMs });
    } catch (error) {
      throw refusal(error, 'The role could not be changed just now.');
    }
  }

  async remove(workspace: WorkspaceMembership, userId: string): Promise<void> {
    try {
      await this.settings.RemoveMember({ acting: acting(workspace), userId }, { deadlineMs: this.changeDeadlineMs });
    } catch (error) {
      throw refusal(error, 'The member could not be removed just now; they may still have access.');
    }
  }
}


/** A SettingsService failure as a page: what happened and what to do. */
function refusal(error: unknown, unavailable: string): UserFacingError {
  if (isGrpcError(error)) {
    switch (error.code) {
      case GrpcStatus.PERMISSION_DENIED:
        return /guests/i.test(error.details) ? membersGuestRefusal() : ownersOnlyRefusal();
      case GrpcStatus.NOT_FOUND:
        return new UserFacingError(404, 'Member not found', 'That person is not a member of this workspace. Go back to the list of members and reload it.');
      case GrpcStatus.FAILED_PRECONDITION:
        return new UserFacingError(
          409,
          'A workspace needs an owner',
          'This is the last owner of the workspace. Make another member an owner first, then change or remove this one.',
        );
      case GrpcStatus.INVALID_ARGUMENT:
        return new UserFacingError(400, 'Not accepted', 'Choose one of the roles owner, member or guest, then try again.');
    }
  }
  return new UserFacingError(503, 'Members unavailable', `${unavailable} ${sentences.tryAgainLater}`, {}, { cause: error });
}
