import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errors, type InteractionResults } from 'oidc-provider';
import { z } from 'zod';
import { UserFacingError } from '../domain/errors.js';
import { consentFor } from '../domain/oauth-consent.js';
import { consentPage } from './html/oauth.js';
import type { Viewer } from './html/layout.js';
import { viewerOf } from './viewer.js';

const params = z.object({ uid: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });
const consentForm = z.object({
  _csrf: z.string().max(100).optional(),
  decision: z.enum(['allow', 'deny']),
  access: z.enum(['read', 'read write']).default('read'),
});

const expired = (): UserFacingError =>
  new UserFacingError(400, 'Authorization expired', 'This authorization request is no longer valid. Go back to the app you were connecting and start connecting again.');

type Details = Awaited<ReturnType<FastifyInstance['oauthProvider']['interactionDetails']>>;

/** The person's user id at the tasks service: the same in each of their memberships. */
const userIdOf = (viewer: Viewer): string => viewer.workspaces[0]!.userId;

/**
 * The authorization server's interactions (oidc-provider sends the browser to
 * /oauth/interaction/:uid): the login is the app's own session (signed out: the sign-in at the
 * organisation's provider, then back here), the consent is a page of this app.
 */
export async function oauthInteractionRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const provider = app.oauthProvider;

  const detailsOf = async (request: FastifyRequest, reply: FastifyReply, uid: string): Promise<Details> => {
    let details: Details;
    try {
      details = await provider.interactionDetails(request.raw, reply.raw);
    } catch (error) {
      if (error instanceof errors.SessionNotFound) throw expired();
      throw error;
    }
    if (details.uid !== uid) throw expired();
    return details;
  };
  const finish = async (request: FastifyRequest, reply: FastifyReply, result: InteractionResults, merge: boolean): Promise<FastifyReply> => {
    const to = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: merge });
    return reply.header('cache-control', 'no-store').redirect(to, 303);
  };
  /** The scopes of the API the client asked for and the person has not granted yet, per resource. */
  const missingScopes = (details: Details): Record<string, string[]> =>
    (details.prompt.details as { missingResourceScopes?: Record<string, string[]> }).missingResourceScopes ?? {};

  app.get('/oauth/interaction/:uid', { schema: { params }, config: { session: true } }, async (request, reply) => {
    const viewer = await viewerOf(app, request);
    const details = await detailsOf(request, reply, request.params.uid);
    const userId = userIdOf(viewer);
    // Signed in to the app is signed in here: the provider's session follows the app's person.
    if (details.prompt.name === 'login' || details.session?.accountId !== userId) {
      return finish(request, reply, { login: { accountId: userId } }, false);
    }
    if (details.prompt.name !== 'consent') throw expired();
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    if (!client) throw expired();
    const redirect = new URL(String(details.params.redirect_uri));
    const wanted = Object.values(missingScopes(details)).flat();
    // The consent form's post ends in a redirect to the client: form-action must allow its origin (browsers check every hop).
    reply.header(
      'content-security-policy',
      `default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self' ${redirect.origin}; base-uri 'none'; object-src 'none'`,
    );
    return reply.page(
      consentPage(viewer, {
        uid: details.uid,
        clientId,
        clientName: client.clientName,
        redirectHost: redirect.host,
        wantsWrite: wanted.includes('write'),
      }),
    );
  });

  // The consent form (CSRF-checked like every POST): the person allows `read` or `read write`, or denies.
  app.post('/oauth/interaction/:uid', { schema: { params, body: consentForm }, config: { session: true } }, async (request, reply) => {
    const viewer = await viewerOf(app, request);
    const details = await detailsOf(request, reply, request.params.uid);
    const userId = userIdOf(viewer);
    if (details.prompt.name !== 'consent' || details.session?.accountId !== userId) throw expired();
    if (request.body.decision === 'deny') {
      return finish(request, reply, { error: 'access_denied', error_description: 'The person denied access.' }, false);
    }
    const clientId = String(details.params.client_id);
    const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    const grant = existing ?? new provider.Grant({ accountId: userId, clientId });
    const prompt = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    if (prompt.missingOIDCScope) grant.addOIDCScope(prompt.missingOIDCScope.join(' '));
    if (prompt.missingOIDCClaims) grant.addOIDCClaims(prompt.missingOIDCClaims);
    for (const { resource, granted, refused } of consentFor(missingScopes(details), request.body.access)) {
      if (granted.length > 0) grant.addResourceScope(resource, granted.join(' '));
      if (refused.length > 0) grant.rejectResourceScope(resource, refused.join(' '));
    }
    const grantId = await grant.save();
    return finish(request, reply, { consent: { grantId } }, true);
  });
}
