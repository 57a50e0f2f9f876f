import { unary } from '@tws/common';
import type { AdminServiceHandlers } from '@tws/proto-types/generated/tasks/v1/AdminService';
import type { Revocations } from '../domain/revocation-publisher.js';
import * as workspaces from '../domain/workspaces.js';
import { memberMessage, planFromProto, roleFromProto, workspaceMessage } from './mappers.js';
import type { HandlerDeps } from './tasks-service.js';

/** tasks.v1.AdminService: operator operations used by the admin CLI. */
export function adminServiceHandlers({ pool, logger, metrics, revocations }: HandlerDeps & { revocations: Revocations }): AdminServiceHandlers {
  const options = { service: 'tasks.v1.AdminService', logger, metrics };
  return {
    CreateWorkspace: unary(
      'CreateWorkspace',
      async (request) => {
        const created = await workspaces.createWorkspace(pool, {
          name: request.name,
          plan: planFromProto(request.plan),
          ownerName: request.ownerName || 'Owner',
          ownerEmail: request.ownerEmail || undefined,
        });
        return { workspace: workspaceMessage(created.workspace), owner: memberMessage(created.owner), apiKey: created.apiKey };
      },
      options,
    ),
    AddMember: unary(
      'AddMember',
      async (request) => ({
        member: memberMessage(
          await workspaces.addMember(pool, {
            workspaceId: request.workspaceId,
            email: request.email,
            name: request.name,
            role: roleFromProto(request.role),
          }),
        ),
      }),
      options,
    ),
    CreateApiKey: unary(
      'CreateApiKey',
      async (request) => ({
        apiKey: await workspaces.createApiKey(pool, { workspaceId: request.workspaceId, userId: request.userId, name: request.name }),
      }),
      options,
    ),
    RevokeApiKey: unary(
      'RevokeApiKey',
      async (request) => {
        // Returns once every gateway replica applied the revocation (bounded; see RevocationPublisher).
        await workspaces.revokeApiKey(pool, revocations, request.workspaceId, request.id);
        return { id: request.id };
      },
      options,
    ),
  };
}
