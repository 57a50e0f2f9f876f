import type Provider from 'oidc-provider';
import { errors, type InteractionResults, type KoaContextWithOIDC } from 'oidc-provider';
import { z } from 'zod';
import type { DevUsers } from './provider.js';
import { errorPage, loginPage } from './pages.js';

/** Bounds of the login form: its body, and failed attempts within one sign-in. */
export const loginLimits = { maxBodyBytes: 4 * 1024, maxFailures: 5, trackedInteractions: 1_000 } as const;

const loginForm = z.object({
  email: z.string().max(254).default(''),
  password: z.string().max(200).default(''),
});

const route = /^\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(login|abort))?$/;

class BadForm extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readForm(ctx: KoaContextWithOIDC): Promise<z.infer<typeof loginForm>> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new BadForm(415, 'The sign-in form must be sent as a web form.');
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > loginLimits.maxBodyBytes) throw new BadForm(413, 'The sign-in form was too large.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > loginLimits.maxBodyBytes) throw new BadForm(413, 'The sign-in form was too large.');
    chunks.push(chunk as Buffer);
  }
  const fields = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
  const parsed = loginForm.safeParse(fields);
  if (!parsed.success) throw new BadForm(400, 'The email or password is longer than any account has.');
  return parsed.data;
}

type Middleware = (ctx: KoaContextWithOIDC, next: () => Promise<unknown>) => Promise<unknown>;

/**
 * The provider's own pages at /interaction/:uid: the login form (email + password of a configured
 * user), the first-party consent (granted without asking) and "cancel". Everything else falls
 * through to oidc-provider.
 */
export function interactionRoutes(provider: Provider, users: DevUsers, csp: string): Middleware {
  // Failed attempts per interaction (bounded: the oldest entry goes first).
  const failures = new Map<string, number>();

  const page = (ctx: KoaContextWithOIDC, status: number, html: string): void => {
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = html;
  };
  const finish = async (ctx: KoaContextWithOIDC, result: InteractionResults, merge: boolean): Promise<void> => {
    const to = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
    ctx.redirect(to);
    ctx.status = 303;
  };

  return async (ctx, next) => {
    const match = route.exec(ctx.path);
    if (!match) return next();
    const [, uid, action] = match;
    ctx.set('cache-control', 'no-store');
    ctx.set('content-security-policy', csp);
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('referrer-policy', 'no-referrer');
    const method = action === 'login' ? 'POST' : 'GET';
    if (ctx.method !== method) {
      ctx.set('allow', method);
      return page(ctx, 405, errorPage('Not allowed', `Use ${method} for this address.`));
    }
    try {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      if (details.uid !== uid) throw new errors.SessionNotFound('interaction does not match this address');
      const client = await provider.Client.find(String(details.params.client_id));
      const clientName = client?.clientName ?? String(details.params.client_id);

      if (action === 'abort') {
        failures.delete(details.uid);
        return await finish(ctx, { error: 'access_denied', error_description: 'The person cancelled signing in.' }, false);
      }

      if (details.prompt.name === 'consent') {
        // The only client is first-party (the app itself): grant what it asked for without asking.
        const accountId = details.session?.accountId;
        if (!accountId) throw new errors.SessionNotFound('no signed-in account for consent');
        const grant = details.grantId
          ? await provider.Grant.find(details.grantId)
          : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
        if (!grant) throw new errors.SessionNotFound('grant not found');
        const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
        if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
        const grantId = await grant.save();
        return await finish(ctx, { consent: details.grantId ? {} : { grantId } }, true);
      }
      if (details.prompt.name !== 'login') {
        return page(ctx, 400, errorPage('Sign-in cannot continue', 'This provider cannot complete that step. Go back to the app and sign in again.'));
      }

      const hint = typeof details.params.login_hint === 'string' ? details.params.login_hint.slice(0, 254) : undefined;
      if (action === undefined) return page(ctx, 200, loginPage({ uid: details.uid, clientName, ...(hint ? { email: hint } : {}) }));

      const form = await readForm(ctx);
      const user = users.authenticate(form.email, form.password);
      if (!user) {
        const count = (failures.get(details.uid) ?? 0) + 1;
        failures.delete(details.uid);
        if (count >= loginLimits.maxFailures) {
          return await finish(ctx, { error: 'access_denied', error_description: 'Too many wrong passwords.' }, false);
        }
        if (failures.size >= loginLimits.trackedInteractions) failures.delete(failures.keys().next().value ?? '');
        failures.set(details.uid, count);
        const error = `Wrong email or password. Check both and try again (${loginLimits.maxFailures - count} attempts left).`;
        return page(ctx, 200, loginPage({ uid: details.uid, clientName, email: form.email, error }));
      }
      failures.delete(details.uid);
      return await finish(ctx, { login: { accountId: users.subjectOf(user) } }, false);
    } catch (error) {
      if (error instanceof BadForm) return page(ctx, error.status, errorPage('Sign-in cannot continue', error.message));
      if (error instanceof errors.SessionNotFound) {
        return page(ctx, 400, errorPage('Sign-in expired', 'This sign-in page is no longer valid. Go back to the app and sign in again.'));
      }
      throw error;
    }
  };
}
