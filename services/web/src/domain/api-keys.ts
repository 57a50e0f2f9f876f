import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError } from '@tws/common';
import type { ApiKeySummary__Output } from '@tws/proto-types/generated/tasks/v1/ApiKeySummary';
import type { SettingsApi } from '../clients/tasks.js';
import { sentences, UserFacingError } from './errors.js';
import { acting, type WorkspaceMembership } from './people.js';

/** One API key as the settings page lists it (never the key). */
export interface ApiKeyRow {
  id: string;
  name: string;
  /** The key's first characters, or '' for a key from before prefixes were recorded. */
  prefix: string;
  createdByUserId: string;
  createdByName: string;
  createdAt: string;
  lastUsedAt: string | undefined;
}

/** A key just created: the only time its secret is seen. */
export interface CreatedApiKey {
  row: ApiKeyRow;
  key: string;
}

export const maxKeyNameLength = 100;

export const guestRefusal = (): UserFacingError =>
  new UserFacingError(
    403,
    'Guests cannot manage API keys',
    'Guests cannot create or manage API keys. Ask an owner of this workspace to make you a member, or to create a key for you.',
  );

const toRow = (key: ApiKeySummary__Output): ApiKeyRow => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdByUserId: key.createdByUserId,
  createdByName: key.createdByName,
  createdAt: key.createdAt,
  lastUsedAt: key.lastUsedAt ?? undefined,
});

/**
 * The API keys of the workspace settings, as the signed-in person (their workspace and user id,
 * from ListMembershipsByEmail) asks tasks.v1.SettingsService. The rules (owners: every key;
 * members: their own; guests: none) are the tasks service's; this maps its refusals to sentences.
 */
export class ApiKeys {
  constructor(
    private readonly settings: SettingsApi,
    private readonly revokeDeadlineMs: number,
  ) {}

  async list(workspace: WorkspaceMembership): Promise<{ keys: ApiKeyRow[]; truncated: boolean }> {
    try {
      const response = await this.settings.ListApiKeys({ acting: acting(workspace) });
      return { keys: response.apiKeys.map(toRow), truncated: response.truncated };
    } catch (error) {
      throw refusal(error, 'Your API keys could not be loaded just now.');
    }
  }

  async create(workspace: WorkspaceMembership, name: string): Promise<CreatedApiKey> {
    try {
      const response = await this.settings.CreateApiKey({ acting: acting(workspace), name });
      if (!response.apiKey?.key || !response.summary) throw new Error('CreateApiKey answered without the key');
      return { row: toRow(response.summary), key: response.apiKey.key };
    } catch (error) {
      throw refusal(error, 'The API key could not be created just now.');
    }
  }

  async revoke(workspace: WorkspaceMembership, id: string): Promise<void> {
    try {
      await this.settings.RevokeApiKey({ acting: acting(workspace), id }, { deadlineMs: this.revokeDeadlineMs });
    } catch (error) {
      throw refusal(error, 'The API key could not be revoked just now; it may still work.');
    }
  }
}


/** A SettingsService failure as a page: what happened and what to do. */
function refusal(error: unknown, unavailable: string): UserFacingError {
  if (isGrpcError(error)) {
    switch (error.code) {
      case GrpcStatus.PERMISSION_DENIED:
        if (/guests/i.test(error.details)) return guestRefusal();
        return new UserFacingError(
          403,
          'Not your API key',
          'You can revoke only the API keys you created. Ask an owner of this workspace to revoke this one.',
        );
      case GrpcStatus.NOT_FOUND:
        return new UserFacingError(404, 'API key not found', 'There is no such API key in this workspace. Go back to the list of API keys and reload it.');
      case GrpcStatus.INVALID_ARGUMENT:
        return new UserFacingError(400, 'Name not accepted', `Give the key a name of 1 to ${maxKeyNameLength} characters, then create it again.`);
      case GrpcStatus.FAILED_PRECONDITION:
        return new UserFacingError(409, 'Too many API keys', 'You hold as many API keys as a member may. Revoke one you no longer use, then create the new one.');
    }
  }
  return new UserFacingError(503, 'API keys unavailable', `${unavailable} ${sentences.tryAgainLater}`, {}, { cause: error });
}
