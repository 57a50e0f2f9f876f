import type { RateLimitDecision } from './keyed-buckets.js';

/** The one policy the gateway applies to requests (the name both headers use). */
export const policyName = 'default';

/**
 * The IETF draft's fields (draft-ietf-httpapi-ratelimit-headers, Structured Field lists):
 * `RateLimit-Policy: "default";q=<burst>;w=<seconds a full refill takes>` — the token bucket as a
 * quota per window (q / w is the sustained rate) — and `RateLimit: "default";r=<remaining>;t=<seconds
 * until the bucket is full again>`.
 */
export function rateLimitHeaders(policy: { quota: number; windowSeconds: number }, decision: RateLimitDecision): Record<'ratelimit-policy' | 'ratelimit', string> {
  return {
    'ratelimit-policy': `"${policyName}";q=${policy.quota};w=${policy.windowSeconds}`,
    ratelimit: `"${policyName}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
