import type { Counter } from 'prom-client';
import { ProviderUnavailable, SignInRefused, type RelyingParty, type SignInFlow, type VerifiedIdentity } from '../clients/oidc.js';
import { sentences, UserFacingError } from './errors.js';
import type { People } from './people.js';
import { defaultLanding, safeReturnTo } from './return-to.js';
import type { Sessions } from './sessions.js';

export type SignInOutcome = 'signed_in' | 'no_workspace' | 'email_not_verified' | 'refused' | 'expired' | 'provider_unavailable';

/** Longest email kept (RFC 5321's path limit is 256; tasks.users.email takes 320). */
const maxEmailLength = 320;

const providerUnreachable = (cause: unknown): UserFacingError =>
  new UserFacingError(503, 'Sign-in unavailable', `The identity provider could not be reached. ${sentences.tryAgainLater}`, {}, { cause });

/**
 * Sign-in as a use case: start at the provider, finish at the callback, and turn a verified email
 * into a session only when it belongs to at least one member.
 */
export class SignIn {
  constructor(
    private readonly relyingParty: RelyingParty,
    private readonly people: People,
    private readonly sessions: Sessions,
    private readonly outcomes: Counter<'outcome'>,
  ) {}

  async begin(returnTo: string | undefined): Promise<{ url: URL; flow: SignInFlow }> {
    try {
      return await this.relyingParty.begin(returnTo ?? defaultLanding);
    } catch (error) {
      this.outcomes.inc({ outcome: 'provider_unavailable' });
      throw providerUnreachable(error);
    }
  }

  /** The callback: checks the response against the flow kept since `begin`, then `complete`. */
  async finish(callbackUrl: URL, flow: SignInFlow | undefined): Promise<{ token: string; returnTo: string }> {
    if (!flow) {
      this.outcomes.inc({ outcome: 'expired' });
      throw new UserFacingError(
        400,
        'Sign-in expired',
        `This sign-in took too long or was started in another browser tab. ${sentences.startAgain}`,
      );
    }
    let identity: VerifiedIdentity;
    try {
      identity = await this.relyingParty.finish(callbackUrl, flow);
    } catch (error) {
      if (error instanceof ProviderUnavailable) {
        this.outcomes.inc({ outcome: 'provider_unavailable' });
        throw providerUnreachable(error);
      }
      this.outcomes.inc({ outcome: 'refused' });
      if (error instanceof SignInRefused && error.providerError) {
        throw new UserFacingError(
          400,
          'Not signed in',
          `The identity provider did not sign you in (${error.providerError}). Try again; if it keeps happening, ask your administrator.`,
          {},
          { cause: error },
        );
      }
      throw new UserFacingError(400, 'Not signed in', `The sign-in could not be completed. ${sentences.startAgain}`, {}, { cause: error });
    }
    const { token } = await this.complete(identity);
    return { token, returnTo: safeReturnTo(flow.returnTo) ?? defaultLanding };
  }

  /**
   * After the provider: a person is the members whose email equals the verified email. An email
   * that is not verified, or that belongs to no workspace, makes no session.
   */
  async complete(identity: VerifiedIdentity): Promise<{ token: string; email: string }> {
    const email = identity.email?.trim().toLowerCase();
    if (!email || email.length > maxEmailLength) {
      this.outcomes.inc({ outcome: 'refused' });
      throw new UserFacingError(
        403,
        'No email address',
        'Your identity provider did not share an email address. Ask your administrator to allow the email scope for this app.',
      );
    }
    if (!identity.emailVerified) {
      this.outcomes.inc({ outcome: 'email_not_verified' });
      throw new UserFacingError(
        403,
        'Email not verified',
        `Your identity provider has not verified the email address ${email}. Verify it there, then sign in again.`,
      );
    }
    const workspaces = await this.people.workspacesOf(email);
    if (workspaces.length === 0) {
      this.outcomes.inc({ outcome: 'no_workspace' });
      throw new UserFacingError(
        403,
        `No workspace for ${email}`,
        `There is no workspace for ${email}. Ask a workspace owner to add this email address, then sign in again (or sign in with another account).`,
      );
    }
    const { token } = await this.sessions.create(email);
    this.outcomes.inc({ outcome: 'signed_in' });
    return { token, email };
  }
}
