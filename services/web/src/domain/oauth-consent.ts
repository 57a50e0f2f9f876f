import { apiScopes } from './oauth-provider.js';

/** What the person chose on the consent page. */
export type ConsentAccess = 'read' | 'read write';

/** Per resource: the scopes to grant, and the asked-for scopes to record as refused. */
export interface ResourceConsent {
  resource: string;
  granted: string[];
  refused: string[];
}

/**
 * The consent's effect on each resource the client asked scopes of: only the API's scopes the
 * person chose are granted; every other asked-for scope (`write` when they chose read only, or a
 * scope the API does not have) is refused, so the provider does not ask again for it in this grant.
 */
export function consentFor(missing: Record<string, string[]>, access: ConsentAccess): ResourceConsent[] {
  const chosen = new Set(access.split(' '));
  return Object.entries(missing).map(([resource, scopes]) => {
    const granted = scopes.filter((scope) => chosen.has(scope) && (apiScopes as readonly string[]).includes(scope));
    return { resource, granted, refused: scopes.filter((scope) => !granted.includes(scope)) };
  });
}
