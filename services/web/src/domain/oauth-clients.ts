import { z } from 'zod';
import { isLoopbackHost } from '../config.js';

/** Bounds of a dynamic client registration (RFC 7591): the body, the redirect URIs. */
export const registrationLimits = { maxBodyBytes: 16 * 1024, maxRedirectUris: 10, maxUriLength: 2048, maxNameLength: 100 } as const;

/**
 * A redirect URI a public client may register: https (any host), or plain http only to this
 * machine (127.0.0.1, [::1], localhost: RFC 8252's loopback redirect of native apps); no
 * fragment, no credentials. Custom schemes are refused (another app could claim them).
 */
export function isAllowedRedirectUri(value: string): boolean {
  const url = URL.parse(value);
  if (!url || url.hash !== '' || value.includes('#') || url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

const uri = z.string().max(registrationLimits.maxUriLength, `must be at most ${registrationLimits.maxUriLength} characters`);

/**
 * What this server checks of a registration before oidc-provider validates the rest of RFC 7591's
 * metadata: public clients (`token_endpoint_auth_method` none) of the code flow only, with
 * https or loopback redirect URIs and a bounded name. Other fields pass through to oidc-provider.
 */
export const registrationRequest = z.looseObject({
  redirect_uris: z
    .array(uri.refine(isAllowedRedirectUri, 'must be https, or http on a loopback host (127.0.0.1, [::1] or localhost), without a fragment'))
    .min(1, 'must list at least one redirect URI')
    .max(registrationLimits.maxRedirectUris, `must list at most ${registrationLimits.maxRedirectUris} redirect URIs`),
  client_name: z.string().trim().min(1).max(registrationLimits.maxNameLength, `must be at most ${registrationLimits.maxNameLength} characters`).optional(),
  // Defaulted here (RFC 7591's own default is client_secret_basic): oidc-provider decides whether to mint a secret before applying its defaults.
  token_endpoint_auth_method: z.literal('none', 'must be "none": only public clients (no client secret) may register').default('none'),
  grant_types: z
    .array(z.enum(['authorization_code', 'refresh_token'], 'may only be authorization_code and refresh_token'))
    .max(2)
    .optional(),
  response_types: z.array(z.literal('code', 'may only be "code"')).max(1).optional(),
  client_uri: uri.optional(),
  logo_uri: uri.optional(),
  scope: z.string().max(200).optional(),
}).transform(({ scope, ...rest }) => {
  // The API's scopes (`read`, `write`) are granted per resource at consent, not registered: an MCP
  // client (the official SDK) registers with the protected resource's `scopes_supported`, which
  // oidc-provider would refuse as unknown client scopes. Only the OpenID scopes are kept.
  const kept = scope?.split(' ').filter((value) => oidcScopes.includes(value)) ?? [];
  return kept.length > 0 ? { ...rest, scope: kept.join(' ') } : rest;
});

/** The scopes oidc-provider itself knows (domain/oauth-provider.ts `scopes`). */
const oidcScopes: readonly string[] = ['openid', 'offline_access'];

export type RegistrationRequest = z.infer<typeof registrationRequest>;

/** RFC 7591 §3.2.2: the error code of a refused field. */
export function registrationErrorCode(field: string | undefined): 'invalid_redirect_uri' | 'invalid_client_metadata' {
  return field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata';
}
