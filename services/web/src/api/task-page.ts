import { bindActor } from '@tws/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Label } from '../domain/labels.js';
import type { WorkspaceMembership } from '../domain/people.js';
import { CommentRefused, maxCommentLength, parseTaskRef, type TaskRef } from '../domain/task-page.js';
import { notFoundError } from '../plugins/errors.js';
import type { Viewer } from './html/layout.js';
import { taskPage, taskPath } from './html/task-page.js';
import { viewerOf } from './viewer.js';

/** Any text: an address that is not a task of one of the person's workspaces is the one 404 page. */
const taskParams = z.object({ urlId: z.string().max(100), ref: z.string().max(100) });
const pageQuery = z.object({ notice: z.enum(['comment-added']).optional() });
// The text is checked below with a sentence at the field (the form's maxlength stops it first);
// this route's body limit bounds it here (a comment of maxCommentLength characters, each up to 12
// bytes once form-encoded, and the CSRF field).
const commentBody = z.object({ _csrf: z.string().max(200).optional(), text: z.string().default('') });
const commentBodyLimit = maxCommentLength * 12 + 1024;

/**
 * The signed-in person, the workspace of the address and the task reference. A workspace that is
 * not one of theirs and a malformed reference are the same 404 as a task that does not exist.
 * Guests read tasks and comment like members (the contract restricts them only in API keys).
 */
async function taskAddress(app: FastifyInstance, request: FastifyRequest, urlId: string, rawRef: string): Promise<{ viewer: Viewer; workspace: WorkspaceMembership; ref: TaskRef }> {
  const viewer = await viewerOf(app, request);
  const workspace = viewer.workspaces.find((candidate) => candidate.urlId === urlId);
  const ref = parseTaskRef(rawRef);
  // (The error pages keep the session's plain header: the 404 is the same page whatever the reason.)
  if (!workspace || !ref) throw notFoundError();
  bindActor({ type: 'user', id: workspace.userId, name: null });
  return { viewer, workspace, ref };
}

/**
 * The workspace's labels the task page's editor offers (fetched beside the task): owners and members
 * label tasks; a guest gets the read-only chips (undefined), without a call that would be refused.
 */
async function labelsToOffer(app: FastifyInstance, workspace: WorkspaceMembership): Promise<Label[] | undefined> {
  if (workspace.role === 'guest') return undefined;
  return app.labels.list(workspace);
}

/** The task page `{app_url}/{urlId}/task/{taskPrefix}-{number}` and adding a comment to it. */
export async function taskPageRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  // Signed out: sent to sign in, and back to this address after (the session plugin's returnTo).
  const session = { session: true } as const;

  app.get('/:urlId/task/:ref', { schema: { params: taskParams, querystring: pageQuery }, config: session }, async (request, reply) => {
    const { viewer, workspace, ref } = await taskAddress(app, request, request.params.urlId, request.params.ref);
    const [data, workspaceLabels] = await Promise.all([app.taskPages.load(workspace, ref), labelsToOffer(app, workspace)]);
    return reply.page(taskPage(viewer, workspace, data, { notice: request.query.notice, workspaceLabels }));
  });

  // CSRF-checked (plugins/csrf.ts). Attributed to the signed-in person; 303 back to the task.
  app.post(
    '/:urlId/task/:ref/comments',
    { schema: { params: taskParams, body: commentBody }, config: session, bodyLimit: commentBodyLimit },
    async (request, reply) => {
      const { viewer, workspace, ref } = await taskAddress(app, request, request.params.urlId, request.params.ref);
      const text = request.body.text;
      let error: string | undefined;
      if (text.trim().length === 0) error = 'Write a comment first, then add it.';
      else if (text.length > maxCommentLength) {
        error = `The comment is ${text.length.toLocaleString('en')} characters long; shorten it to at most ${maxCommentLength.toLocaleString('en')}.`;
      } else {
        try {
          await app.taskPages.addComment(workspace, ref, text);
          return reply.redirect(`${taskPath(workspace, ref)}?notice=comment-added#comments`, 303);
        } catch (refused) {
          if (!(refused instanceof CommentRefused)) throw refused;
          error = refused.message;
        }
      }
      const [data, workspaceLabels] = await Promise.all([app.taskPages.load(workspace, ref), labelsToOffer(app, workspace)]);
      return reply.page(taskPage(viewer, workspace, data, { comment: { error, text: text.slice(0, maxCommentLength) }, workspaceLabels }), 400);
    },
  );
}
