import { unary } from '@tws/common';
import type { ActingPerson__Output } from '@tws/proto-types/generated/tasks/v1/ActingPerson';
import type { ApiKeySummary as ApiKeySummaryMessage } from '@tws/proto-types/generated/tasks/v1/ApiKeySummary';
import type { SettingsServiceHandlers } from '@tws/proto-types/generated/tasks/v1/SettingsService';
import * as settings from '../domain/api-key-settings.js';
import type { Revocations } from '../domain/revocation-publisher.js';
import type { ApiKeySummary } from '../store/api-keys.js';
import { memberSettingsHandlers } from './member-settings-service.js';
import type { HandlerDeps } from './tasks-service.js';

const acting = (message: ActingPerson__Output | null): settings.ActingPerson => ({
  workspaceId: message?.workspaceId ?? '',
  userId: message?.userId ?? '',
});

const summaryMessage = (key: ApiKeySummary): ApiKeySummaryMessage => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix ?? '',
  createdByUserId: key.createdByUserId,
  createdByName: key.createdByName,
  createdAt: key.createdAt.toISOString(),
  ...(key.lastUsedAt ? { lastUsedAt: key.lastUsedAt.toISOString() } : {}),
});

/** tasks.v1.SettingsService: the workspace settings of a signed-in person (services/web); rules in domain/api-key-settings.ts. */
export function settingsServiceHandlers(deps: HandlerDeps & { revocations: Revocations }): SettingsServiceHandlers {
  const { pool, logger, metrics, revocations } = deps;
  const options = { service: 'tasks.v1.SettingsService', logger, metrics };
  return {
    ListApiKeys: unary(
      'ListApiKeys',
      async (request) => {
        const listed = await settings.listApiKeys(pool, acting(request.acting));
        return { apiKeys: listed.apiKeys.map(summaryMessage), truncated: listed.truncated };
      },
      options,
    ),
    CreateApiKey: unary(
      'CreateApiKey',
      async (request) => {
        const created = await settings.createOwnApiKey(pool, acting(request.acting), request.name);
        return { apiKey: { id: created.id, name: created.name, key: created.key }, summary: summaryMessage(created.summary) };
      },
      options,
    ),
    RevokeApiKey: unary(
      'RevokeApiKey',
      async (request) => {
        const confirmation = await settings.revokeManagedApiKey(pool, revocations, acting(request.acting), request.id);
        return { id: request.id, confirmed: confirmation.confirmed };
      },
      options,
    ),
    ...memberSettingsHandlers(deps),
  };
}
