import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { localStack } from './local-stack.js';

export interface DevJwtKeys {
  privateKeyFile: string;
  publicKeyPem: string;
}

/** A persistent development Ed25519 key pair, so tokens issued by the admin CLI outlive restarts. */
export function ensureDevJwtKeys(): DevJwtKeys {
  const privateKeyFile = path.join(localStack.devJwtDir, 'private.pem');
  const publicKeyFile = path.join(localStack.devJwtDir, 'public.pem');
  if (!existsSync(privateKeyFile) || !existsSync(publicKeyFile)) {
    mkdirSync(localStack.devJwtDir, { recursive: true, mode: 0o700 });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519', {
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    writeFileSync(privateKeyFile, privateKey, { mode: 0o600 });
    writeFileSync(publicKeyFile, publicKey);
  }
  return { privateKeyFile, publicKeyPem: readFileSync(publicKeyFile, 'utf8') };
}

/** Gateway settings that make it trust the development key (only the local stack sets these). */
export function devJwtGatewayEnv(keys: DevJwtKeys): NodeJS.ProcessEnv {
  return {
    AUTH_JWT_PUBLIC_KEY: keys.publicKeyPem,
    AUTH_JWT_ISSUER: localStack.devJwtIssuer,
    AUTH_JWT_AUDIENCE: localStack.devJwtAudience,
  };
}
