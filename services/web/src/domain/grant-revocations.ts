import type { RevocationsApi } from '../clients/tasks.js';
import { oauthTtl } from './oauth-provider.js';

/** The logging the announcer does (pino's and fastify's loggers fit). */
interface WarnLogger {
  warn(details: object, message: string): void;
}

/** Where revoked grants are marked announced, and found when they were not (web.oauth_revoked_grants). */
export interface AnnouncementStore {
  announced(grantId: string): Promise<void>;
  unannounced(withinSeconds: number): Promise<Array<{ grantId: string; accountId: string | null; revokedAt: Date }>>;
}

/** Tried at once this many times (with short pauses) before the revoking request returns. */
const immediateAttempts = 3;
/** Then retried in the background, backing off to this, until acknowledged or the grant's tokens expired. */
const maxBackoffMs = 30_000;

/**
 * Pushes a revoked grant to the gateways (tasks.v1.RevocationService.AnnounceGrantRevocation), so
 * its access tokens are refused on the very next request at every replica. The tasks service
 * records it until the grant's last access token expires (now + the access token lifetime, plus a
 * minute of skew) and returns once the gateways applied it.
 *
 * The revoking request waits for the first attempts, all within `deadlineMs` (REVOKE_DEADLINE_MS),
 * so "disconnected" means refused; if the tasks
 * service cannot be reached, it goes on retrying in the background until it answers or there is
 * nothing left to refuse (the tokens expired). Idempotent on the tasks side, so a retry after a
 * lost answer is harmless.
 */
export class GrantRevocationAnnouncer {
  private readonly background = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly revocations: RevocationsApi,
    private readonly options: { deadlineMs: number; logger: WarnLogger; retryDelayMs?: number; store?: AnnouncementStore },
  ) {}

  /** Announces the grant revoked at `revokedAtMs` (now by default): its tokens all expire within the access token lifetime after it. */
  async announce(grantId: string, actorUserId?: string, revokedAtMs = Date.now()): Promise<void> {
    const expiresAtMs = revokedAtMs + oauthTtl.AccessToken * 1000 + 60_000;
    // The immediate attempts share one budget (the revoking request waits at most about this long).
    const budgetEndsAt = Date.now() + this.options.deadlineMs;
    const attempt = async (deadlineMs: number): Promise<boolean> => {
      try {
        const answer = await this.revocations.AnnounceGrantRevocation(
          { grantId, expiresAtMs: String(expiresAtMs), actorUserId: actorUserId ?? '' },
          { deadlineMs },
        );
        if (!answer.confirmed) this.options.logger.warn({ grantId }, 'grant revocation recorded, but not every gateway confirmed it (their streams stop being trusted)');
        await this.options.store?.announced(grantId).catch((error: unknown) => this.options.logger.warn({ err: error, grantId }, 'grant announced, but not marked so (it will be announced again)'));
        return true;
      } catch (error) {
        this.options.logger.warn({ err: error, grantId }, 'grant revocation not announced yet (retrying)');
        return false;
      }
    };
    const pause = this.options.retryDelayMs ?? 500;
    for (let i = 0; i < immediateAttempts && Date.now() < budgetEndsAt; i++) {
      if (await attempt(Math.max(1_000, budgetEndsAt - Date.now()))) return;
      if (i < immediateAttempts - 1) await new Promise((resolve) => setTimeout(resolve, pause * (i + 1)));
    }
    this.retryLater(() => attempt(this.options.deadlineMs), expiresAtMs, pause * 4);
  }

  private retryLater(attempt: () => Promise<boolean>, untilMs: number, delayMs: number): void {
    if (this.closed || Date.now() >= untilMs) return;
    const timer = setTimeout(() => {
      this.background.delete(timer);
      void attempt().then((done) => {
        if (!done) this.retryLater(attempt, untilMs, Math.min(delayMs * 2, maxBackoffMs));
      });
    }, delayMs);
    timer.unref();
    this.background.add(timer);
  }

  /**
   * Announces once more every grant revoked within the access token lifetime that was never
   * acknowledged (its web replica stopped first, or the tasks service was down all along): run by
   * the sweeper, so a revocation reaches the gateways even across restarts. Answers how many went.
   */
  async resume(): Promise<number> {
    const pending = (await this.options.store?.unannounced(oauthTtl.AccessToken + 60)) ?? [];
    let sent = 0;
    for (const grant of pending) {
      if (this.closed) break;
      const expiresAtMs = grant.revokedAt.getTime() + oauthTtl.AccessToken * 1000 + 60_000;
      try {
        await this.revocations.AnnounceGrantRevocation(
          { grantId: grant.grantId, expiresAtMs: String(expiresAtMs), actorUserId: grant.accountId ?? '' },
          { deadlineMs: this.options.deadlineMs },
        );
        await this.options.store?.announced(grant.grantId);
        sent++;
      } catch (error) {
        this.options.logger.warn({ err: error, grantId: grant.grantId }, 'grant revocation still not announced (the next sweep tries again)');
        break;
      }
    }
    return sent;
  }

  /** Stops the background retries (the process is stopping). */
  close(): void {
    this.closed = true;
    for (const timer of this.background) clearTimeout(timer);
    this.background.clear();
  }
}
