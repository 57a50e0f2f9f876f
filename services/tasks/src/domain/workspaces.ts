import { DomainError, forbidden, inTransaction, invalid, notFound, recordAudit, type Pool, type Queryable } from '@tws/common';
import { z } from 'zod';
import { countLiveApiKeys, findApiKeyByHash, insertApiKey, lockApiKeyOwner, revokeApiKey as revokeApiKeyRow } from '../store/api-keys.js';
import {
  getMember,
  getPlanCounters,
  getWorkspace as getWorkspaceRow,
  insertMember,
  insertStatuses,
  insertWorkspace,
  listMembers as listMemberRows,
  listMembershipsByEmail as listMembershipRows,
  listStatuses as listStatusRows,
  upsertUser,
} from '../store/workspaces.js';
import type { ApiKeyUsage } from './api-key-usage.js';
import { displayPrefix, generateApiKey, hashApiKey, looksLikeApiKey, maxLiveKeysPerMember } from './api-keys.js';
import { deriveTaskPrefix, newUrlId } from './identifiers.js';
import type { Confirmation, Revocations } from './revocation-publisher.js';
import { apiKeyRevoked } from './revocations.js';
import { defaultStatuses, freePlanLimits, type IssuedApiKey, type Member, type Membership, type Plan, type Role, type Status, type Workspace } from './model.js';
import { pathId, requiredText } from './validation.js';

const emailSchema = z.email();

/** The longest email accepted (RFC 5321's 64-character local part, @, 255-character domain). */
export const maxEmailLength = 320;

/** An email as stored: trimmed, lower-cased, valid, at most `maxEmailLength` characters. */
export function normaliseEmail(email: string | undefined): string {
  const value = (email ?? '').trim().toLowerCase();
  if (value.length > maxEmailLength) throw invalid(`email must be at most ${maxEmailLength} characters`);
  if (!emailSchema.safeParse(value).success) throw invalid('email must be a valid email address');
  return value;
}

/** The workspace a request acts in; NOT_FOUND when it does not exist. */
export async function getWorkspace(pool: Queryable, workspaceId: string): Promise<Workspace> {
  const workspace = await getWorkspaceRow(pool, pathId(workspaceId, 'workspace'));
  if (!workspace) throw notFound('workspace not found');
  return workspace;
}

/** The workspace's plan, its limits (null: none) and the counts they apply to (GET /v1/usage). */
export interface Usage {
  plan: Plan;
  limits: { projects: number | null; tasks: number | null };
  counts: { projects: number; tasks: number };
}

export async function getUsage(pool: Queryable, workspaceId: string): Promise<Usage> {
  const found = await getPlanCounters(pool, pathId(workspaceId, 'workspace'));
  if (!found) throw notFound('workspace not found');
  const limited = found.plan === 'free';
  return {
    plan: found.plan,
    limits: { projects: limited ? freePlanLimits.projects : null, tasks: limited ? freePlanLimits.tasks : null },
    counts: { projects: found.projectCount, tasks: found.taskCount },
  };
}

export async function listMembers(pool: Queryable, workspaceId: string): Promise<Member[]> {
  const id = pathId(workspaceId, 'workspace');
  const members = await listMemberRows(pool, id);
  if (members.length === 0) await getWorkspace(pool, id);
  return members;
}

export async function listStatuses(pool: Queryable, workspaceId: string): Promise<Status[]> {
  const id = pathId(workspaceId, 'workspace');
  const statuses = await listStatusRows(pool, id);
  if (statuses.length === 0) await getWorkspace(pool, id);
  return statuses;
}

export async function getMembership(pool: Queryable, workspaceId: string, userId: string): Promise<Member> {
  const member = await getMember(pool, pathId(workspaceId, 'member'), pathId(userId, 'member'));
  if (!member) throw notFound('member not found');
  return member;
}

/** The workspaces of the person with this email (any case); none when no member has it. */
export async function listMembershipsByEmail(pool: Queryable, email: string): Promise<Membership[]> {
  if (email.length > maxEmailLength) throw invalid(`email must be at most ${maxEmailLength} characters`);
  return listMembershipRows(pool, normaliseEmail(email));
}

export interface Authenticated {
  workspaceId: string;
  apiKeyId: string;
  apiKeyName: string;
  userId: string;
}

/**
 * Resolves an API key by its hash; UNAUTHENTICATED for anything but a live key. A found key's use
 * is handed to `usage` (not awaited: "last used at" is never on the request's path).
 */
export async function authenticateApiKey(pool: Queryable, key: string, usage?: ApiKeyUsage): Promise<Authenticated> {
  const rejected = new DomainError('unauthenticated', 'invalid API key');
  if (!looksLikeApiKey(key)) throw rejected;
  const found = await findApiKeyByHash(pool, hashApiKey(key));
  if (!found) throw rejected;
  usage?.record(found.apiKeyId);
  return { workspaceId: found.workspaceId, apiKeyId: found.apiKeyId, apiKeyName: found.name, userId: found.userId };
}

async function issueKey(db: Queryable, workspaceId: string, userId: string, name: string): Promise<IssuedApiKey> {
  const key = generateApiKey();
  const id = await insertApiKey(db, { workspaceId, userId, name, keyHash: hashApiKey(key), prefix: displayPrefix(key) });
  return { id, name, key };
}

/**
 * A new workspace with its owner (a user found or created by email), the default statuses and a
 * first API key, in one transaction.
 */
export async function createWorkspace(
  pool: Pool,
  input: { name: string; plan: Plan; ownerName: string; ownerEmail: string | undefined },
): Promise<{ workspace: Workspace; owner: Member; apiKey: IssuedApiKey }> {
  const name = requiredText(input.name, 'name', 200);
  const ownerName = requiredText(input.ownerName, 'owner name', 200);
  return inTransaction(pool, async (db) => {
    let workspace: Workspace | null = null;
    // The random suffix makes a clash unlikely; draw again if it happens.
    for (let attempt = 0; workspace === null; attempt++) {
      if (attempt === 5) throw new Error('could not draw a free workspace url id');
      workspace = await insertWorkspace(db, { name, urlId: newUrlId(name), taskPrefix: deriveTaskPrefix(name, 'WS'), plan: input.plan });
    }
    const ownerEmail = normaliseEmail(input.ownerEmail ?? `owner@${workspace.urlId}.example`);
    const userId = await upsertUser(db, { name: ownerName, email: ownerEmail });
    await insertMember(db, workspace.id, userId, 'owner');
    await insertStatuses(db, workspace.id, defaultStatuses);
    const apiKey = await issueKey(db, workspace.id, userId, 'Default key');
    const owner = await getMember(db, workspace.id, userId);
    await recordAudit(
      db,
      { workspaceId: workspace.id, action: 'workspace.created', resourceType: 'workspace', resourceId: workspace.id },
      { workspaceId: workspace.id, action: 'member.added', resourceType: 'member', resourceId: userId, changes: ['role'] },
      { workspaceId: workspace.id, action: 'apiKey.created', resourceType: 'apiKey', resourceId: apiKey.id },
    );
    return { workspace, owner: owner!, apiKey };
  });
}

/**
 * Adds a person (found or created by email, shared across workspaces) to a workspace. The one path
 * of the admin CLI (AdminService) and of the members settings (SettingsService), which passes
 * `authorize` to check the acting person in the same transaction.
 */
export async function addMember(
  pool: Pool,
  input: { workspaceId: string; email: string; name: string; role: Role },
  authorize?: (db: Queryable) => Promise<void>,
): Promise<Member> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const name = requiredText(input.name, 'name', 200);
  const email = normaliseEmail(input.email);
  return inTransaction(pool, async (db) => {
    await getWorkspace(db, workspaceId);
    await authorize?.(db);
    const userId = await upsertUser(db, { name, email });
    if (!(await insertMember(db, workspaceId, userId, input.role))) {
      throw new DomainError('already_exists', 'user is already a member of this workspace');
    }
    await recordAudit(db, { workspaceId, action: 'member.added', resourceType: 'member', resourceId: userId, changes: ['role'] });
    return (await getMember(db, workspaceId, userId))!;
  });
}

/**
 * A new API key for a member; guests cannot have keys, and a member holds at most
 * `maxLiveKeysPerMember` live ones. The one path of the admin CLI (AdminService) and of the
 * workspace settings (SettingsService, where `userId` is the acting person).
 */
export async function createApiKey(
  pool: Pool,
  input: { workspaceId: string; userId: string; name: string },
): Promise<IssuedApiKey> {
  const workspaceId = pathId(input.workspaceId, 'workspace');
  const name = requiredText(input.name, 'name', 100);
  return inTransaction(pool, async (db) => {
    await getWorkspace(db, workspaceId);
    const member = await getMember(db, workspaceId, pathId(input.userId, 'member'));
    if (!member) throw notFound('user is not a member of this workspace');
    if (member.role === 'guest') throw forbidden('guests cannot create API keys');
    if ((await countLiveApiKeys(db, workspaceId, member.userId)) >= maxLiveKeysPerMember) {
      throw new DomainError('failed_precondition', `a member can hold at most ${maxLiveKeysPerMember} live API keys; revoke one first`);
    }
    const issued = await issueKey(db, workspaceId, member.userId, name);
    await recordAudit(db, { workspaceId, action: 'apiKey.created', resourceType: 'apiKey', resourceId: issued.id });
    return issued;
  });
}

/**
 * Revokes a key (idempotently) and announces it in the same transaction; resolves once the gateways
 * applied it (or the bounded wait ran out: the key is revoked in the database either way).
 * Without `actingUserId` it is the operator's (admin CLI) revocation of any key; with it, the rule of
 * the workspace settings is checked in the same transaction: owners revoke any key, members the keys
 * they created, guests none; someone who is not a member is told the key does not exist.
 */
export async function revokeApiKey(
  pool: Pool,
  revocations: Revocations,
  workspaceId: string,
  id: string,
  actingUserId?: string,
): Promise<Confirmation> {
  const workspace = pathId(workspaceId, 'API key');
  const key = pathId(id, 'API key');
  const acting = actingUserId === undefined ? undefined : pathId(actingUserId, 'member');
  return revocations.publish(pool, apiKeyRevoked(workspace, key), async (db) => {
    if (acting !== undefined) {
      const member = await getMember(db, workspace, acting);
      if (!member) throw notFound('user is not a member of this workspace');
      if (member.role === 'guest') throw forbidden('guests cannot create or manage API keys');
      const createdBy = await lockApiKeyOwner(db, workspace, key);
      if (createdBy === null) throw notFound('API key not found');
      if (member.role !== 'owner' && createdBy !== member.userId) throw forbidden('members can revoke only the API keys they created');
    }
    if (!(await revokeApiKeyRow(db, workspace, key))) throw notFound('API key not found');
    await recordAudit(db, { workspaceId: workspace, action: 'apiKey.revoked', resourceType: 'apiKey', resourceId: key.toLowerCase() });
  });
}
