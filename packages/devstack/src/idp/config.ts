import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The local identity provider's whole configuration: one JSON file (mode 0600) written per run by
 * `startIdentityProvider` (../identity-provider.ts) and named by IDP_CONFIG_FILE. It carries the
 * generated secrets (client secret, user passwords, cookie keys, signing key), so nothing secret
 * is in the repository or on a command line.
 */
const loopbackUrl = z.url({ protocol: /^https?$/ }).refine((value) => {
  const { hostname } = new URL(value);
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
}, 'must be a loopback URL (127.0.0.1, localhost or [::1]): this provider is for the local stack only');

const redirectUri = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .refine((value) => !new URL(value).hash, 'must not have a fragment');

export const idpUserSchema = z.object({
  email: z.email().max(254),
  name: z.string().min(1).max(200),
  password: z.string().min(12).max(200),
});

export const idpConfigSchema = z.object({
  /** The issuer identifier, `http://127.0.0.1:<port>`: discovery is at `<issuer>/.well-known/openid-configuration`. */
  issuer: loopbackUrl,
  /** Where the server listens (the issuer's host and port). */
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65_535),
  client: z.object({
    clientId: z.string().min(1).max(100),
    clientSecret: z.string().min(32).max(200),
    redirectUris: z.array(redirectUri).max(20),
    postLogoutRedirectUris: z.array(redirectUri).max(20).default([]),
    /**
     * How the client authenticates at the token endpoint. oidc-provider enforces the registered
     * one; the default is openid-client's own default (client_secret_post).
     */
    tokenEndpointAuthMethod: z.enum(['client_secret_post', 'client_secret_basic']).default('client_secret_post'),
  }),
  users: z.array(idpUserSchema).min(1).max(50),
  /** Keys that sign the provider's cookies (newest first), each at least 32 characters. */
  cookieKeys: z.array(z.string().min(32).max(200)).min(1).max(5),
  /** The ID token signing keys (private JWKs, RS256): the provider publishes their public halves. */
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1).max(5) }),
  /** Lifetime of a provider session (the "remember me" of the provider), seconds. */
  sessionTtlSeconds: z.number().int().min(60).max(30 * 86_400).default(8 * 3600),
});

export type IdpConfig = z.infer<typeof idpConfigSchema>;
export type IdpUser = z.infer<typeof idpUserSchema>;

/** Reads and validates the file IDP_CONFIG_FILE names; fails naming the variable or the field. */
export function loadIdpConfig(env: NodeJS.ProcessEnv = process.env): IdpConfig {
  const file = env.IDP_CONFIG_FILE;
  if (!file) throw new Error('IDP_CONFIG_FILE is not set: it names the JSON configuration written by startIdentityProvider');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`IDP_CONFIG_FILE (${file}) is not readable JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = idpConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new Error(`IDP_CONFIG_FILE (${file}) is invalid: ${issues.join('; ')}`);
  }
  return parsed.data;
}
