import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { localStack } from './local-stack.js';

/**
 * Secrets the local stack's services need (never used outside it), generated once and kept in the
 * cache so a restarted stack can still read what it encrypted.
 */
export function devSecretsEnv(): NodeJS.ProcessEnv {
  const dir = path.join(localStack.cacheDir, 'dev-secrets');
  const file = path.join(dir, 'webhook-secret-encryption-key');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return { WEBHOOK_SECRET_ENCRYPTION_KEY: readFileSync(file, 'utf8').trim() };
}
