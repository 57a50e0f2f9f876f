import { randomBytes } from 'node:crypto';

/** Settings the test stack's services run with (short timers, test-only trust). */
export const testServiceEnv: NodeJS.ProcessEnv = {
  // debug: the services' one line per gRPC call (method, code, ms, reqId), which test/e2e/request-ids reads.
  LOG_LEVEL: 'debug',
  // Every request gets the gateway's `access` line (test/e2e/request-ids reads one).
  ACCESS_LOG_SAMPLE_RATIO: '1',
  // Webhooks: a fixed test-only secret encryption key (32 bytes; any stack a suite starts needs one), the
  // contract's delays shortened, and the SSRF guard exempting only the test receivers' address.
  WEBHOOK_SECRET_ENCRYPTION_KEY: Buffer.from('webhooks-test-key-0123456789abcd').toString('base64'),
  WEBHOOK_RETRY_DELAYS: '2s,2s,2s,2s',
  WEBHOOK_ALLOWED_CIDRS: '127.0.10.1/32',
  // The app: every browser test signs in from 127.0.0.1; the sign-in limit itself is tested on an
  // app of its own (services/web/src/api/auth.test.ts, 3 a minute).
  SIGN_IN_RATE_LIMIT_PER_MINUTE: '600',
};

/**
 * Webhook test set-up: receivers listen on `receiverAddress` (the only allow-listed address, so the
 * SSRF guard stays on for everything else, including the rest of 127/8), reached through names
 * under `domain` served by the loopback test DNS server, with certificates of the test CA.
 */
export const webhookTestSettings = {
  domain: 'webhooks.test',
  receiverAddress: '127.0.10.1',
  /** Loopback, but not allow-listed: a DNS answer changed to it must be blocked. */
  rebindAddress: '127.0.10.2',
  retryDelays: '2s,2s,2s,2s',
  retryDelayMs: 2_000,
} as const;

/** Environment of the webhooks service in a test stack, given the test DNS server and CA. */
export function webhookServiceEnv(options: { dnsServer: string; caFile: string }): NodeJS.ProcessEnv {
  return {
    WEBHOOK_SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOWED_CIDRS: `${webhookTestSettings.receiverAddress}/32`,
    WEBHOOK_DNS_SERVERS: options.dnsServer,
    WEBHOOK_EXTRA_CA_FILE: options.caFile,
    WEBHOOK_RETRY_DELAYS: webhookTestSettings.retryDelays,
  };
}
