import type { RevocationsApi } from '../clients/tasks.js';
import { oauthTtl } from './oauth-provider.js';

/** The logging the announcer does (pino's and fastify's loggers fit). */
interface WarnLogger {
  warn(details: object, message: string): void;
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
    private readonly options: { deadlineMs: number; logger: WarnLogger; retryDelayMs?: number },
  ) {}

  async announce(grantId: string, actorUserId?: string): Promise<void> {
    const expiresAtMs = Date.now() + oauthTtl.AccessToken * 1000 + 60_000;
    // The immediate attempts share one budget (the revoking request waits at most about this long).
    const budgetEndsAt = Date.now() + this.options.deadlineMs;
    const attempt = async (deadlineMs: number): Promise<boolean> => {
      try {
        const answer = await this.revocations.AnnounceGrantRevocation(
          { grantId, expiresAtMs: String(expiresAtMs), actorUserId: actorUserId ?? '' },
          { deadlineMs },
        );
        if (!answer.confirmed) this.options.logger.warn({ grantId }, 'grant revocation recorded, but not every gateway confirmed it (their streams stop being trusted)');
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

  /** Stops the background retries (the process is stopping). */
  close(): void {
    this.closed = true;
    for (const timer of this.background) clearTimeout(timer);
    this.background.clear();
  }
}
