import { forbidden, notFound, type Pool, type Queryable } from '@tws/common';
import { getApiKeySummary, listLiveApiKeys, type ApiKeySummary } from '../store/api-keys.js';
import { getMember } from '../store/workspaces.js';
import type { Member } from './model.js';
import type { Confirmation, Revocations } from './revocation-publisher.js';
import { pathId } from './validation.js';
import { createApiKey, revokeApiKey } from './workspaces.js';

/**
 * The API keys part of the workspace settings, for a signed-in person (SettingsService, called by
 * services/web). Every operation names the acting person; the rules live here and in the shared
 * domain paths of workspaces.ts (createApiKey, revokeApiKey), so the admin CLI and the settings
 * cannot drift apart:
 * - owners list and revoke every live key of the workspace, and create their own;
 * - members list, create and revoke the keys they created;
 * - guests can do none of it (PERMISSION_DENIED);
 * - someone who is not a member of the workspace (or a workspace that does not exist): NOT_FOUND.
 */
export interface ActingPerson {
  workspaceId: string;
  userId: string;
}

/** The most keys one list answers (a member holds at most 100; an owner sees the workspace's newest). */
export const maxListedApiKeys = 200;

export const guestsRefused = 'guests cannot create or manage API keys';

async function actingMember(db: Queryable, acting: ActingPerson): Promise<Member> {
  const workspaceId = pathId(acting.workspaceId, 'workspace');
  const member = await getMember(db, workspaceId, pathId(acting.userId, 'member'));
  if (!member) throw notFound('user is not a member of this workspace');
  if (member.role === 'guest') throw forbidden(guestsRefused);
  return member;
}

export async function listApiKeys(pool: Pool, acting: ActingPerson): Promise<{ apiKeys: ApiKeySummary[]; truncated: boolean }> {
  const member = await actingMember(pool, acting);
  const createdBy = member.role === 'owner' ? null : member.userId;
  const rows = await listLiveApiKeys(pool, acting.workspaceId.toLowerCase(), createdBy, maxListedApiKeys + 1);
  return { apiKeys: rows.slice(0, maxListedApiKeys), truncated: rows.length > maxListedApiKeys };
}

/** A key of the acting person (owners and members), through the admin CLI's path; the key is returned once. */
export async function createOwnApiKey(
  pool: Pool,
  acting: ActingPerson,
  name: string,
): Promise<{ id: string; name: string; key: string; summary: ApiKeySummary }> {
  // Checked first so a non-member is NOT_FOUND and a guest gets the settings' sentence.
  await actingMember(pool, acting);
  const issued = await createApiKey(pool, { workspaceId: acting.workspaceId, userId: acting.userId, name });
  const summary = await getApiKeySummary(pool, acting.workspaceId.toLowerCase(), issued.id);
  if (!summary) throw new Error('the API key just created is gone');
  return { ...issued, summary };
}

/** Revokes a key the acting person may manage, through the admin CLI's immediate path. */
export async function revokeManagedApiKey(pool: Pool, revocations: Revocations, acting: ActingPerson, id: string): Promise<Confirmation> {
  return revokeApiKey(pool, revocations, acting.workspaceId, id, acting.userId);
}
