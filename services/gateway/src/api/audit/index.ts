import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../../plugins/errors.js';
import { errorResponses } from '../schemas/common.js';
import { decodeAuditCursor, mergeAuditPages, nextAuditLink } from './paging.js';
import { AuditEntry, AuditQuery, toAuditEntry } from './schemas.js';

export interface AuditRoutesOptions {
  /** The public base URL (PUBLIC_BASE_URL) the `Link` of the next page names. */
  publicBaseUrl: string;
}

export const ownersOnly = 'only workspace owners can read the audit log';

/**
 * GET /v1/audit (issue #19 item 3): the workspace's audit trail, newest first, for owners only: an
 * API key created by an owner, or an OAuth token (scope `read`) of an owner. The role is asked from
 * the tasks service at each request (the audit log is read rarely; a demoted owner loses it at once).
 */
const auditRoutes: FastifyPluginAsyncZod<AuditRoutesOptions> = async (app, options) => {
  app.get(
    '/audit',
    {
      config: { auth: true },
      schema: {
        tags: ['Workspace'],
        operationId: 'listAudit',
        summary: "The workspace's audit log: who created, changed or deleted what, and when",
        description:
          'Owners only (an API key an owner created, or an OAuth token of an owner; members and guests get 403). Entries of projects, sections, tasks, comments, attachments, webhooks, API keys and members, newest first; kept `AUDIT_RETENTION_DAYS` (default 90). `changes` names the fields a change set, never their values. The next page is the `Link: <…>; rel="next"` header (absent on the last page).',
        querystring: AuditQuery,
        response: { 200: z.array(AuditEntry), ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { workspaceId, userId } = request.principal;
      const { member } = await app.tasksApi.GetMembership({ workspaceId, userId });
      if (member?.role !== 'ROLE_OWNER') throw new HttpError(403, ownersOnly);
      const { limit, cursor } = request.query;
      const before = cursor === undefined ? null : decodeAuditCursor(cursor);
      if (before === null && cursor !== undefined) throw new HttpError(400, 'cursor is malformed');
      const listRequest = { workspaceId, limit: limit + 1, ...(before ? { before: { atMs: String(before.atMs), id: before.id } } : {}) };
      // Every source must answer: an audit page with one source missing would silently drop entries.
      const sources = await Promise.all([
        app.auditApis.tasks.ListAudit(listRequest),
        app.auditApis.attachments.ListAudit(listRequest),
        app.auditApis.webhooks.ListAudit(listRequest),
      ]);
      const page = mergeAuditPages(
        sources.map((source) => source.events),
        limit,
      );
      if (page.next) reply.header('link', nextAuditLink(options.publicBaseUrl, limit, page.next));
      return page.events.map(toAuditEntry);
    },
  );
};

export default auditRoutes;
