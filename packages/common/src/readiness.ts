/**
 * A named check of a real dependency. Readiness means "this pod can serve its own work", not
 * "every dependency is up": a dependency that every replica shares (a broker, a peer service,
 * object storage) going down makes every replica unready at once, which in Kubernetes empties the
 * Service and cascades to its callers. So only what each request needs belongs here (a service's
 * own database); shared infrastructure is watched by metrics (e.g. `kafka_reachable`).
 */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
}

/** Runs every check in parallel, each bounded by the timeout, and reports which failed. */
export async function runReadiness(checks: ReadinessCheck[], timeoutMs = 2_000): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        await withTimeout(check(), timeoutMs, `${name} check timed out after ${timeoutMs} ms`);
        return [name, 'ok'] as const;
      } catch (error) {
        return [name, error instanceof Error ? error.message : String(error)] as const;
      }
    }),
  );
  return { ready: results.every(([, result]) => result === 'ok'), checks: Object.fromEntries(results) };
}

/**
 * A check that must pass once (a misconfigured pod — wrong bucket, bad credentials — never becomes
 * ready, so a bad rollout stops there) and is then always ready: a later outage of that dependency
 * fails only the requests that need it, instead of taking every replica out at once.
 */
export function untilFirstSuccess(check: ReadinessCheck): ReadinessCheck {
  let passed = false;
  return {
    name: check.name,
    check: async () => {
      if (passed) return;
      await check.check();
      passed = true;
    },
  };
}

export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
