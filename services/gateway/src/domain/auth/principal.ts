/** Who is calling, as established by the auth plugin on every route that declares `config.auth`. */
export type Principal =
  | {
      workspaceId: string;
      kind: 'apiKey';
      apiKeyId: string;
      apiKeyName: string;
      /** The member who created the key. */
      userId: string;
    }
  | {
      workspaceId: string;
      kind: 'user';
      userId: string;
      /** Scopes granted by the token, normalised: `write` always brings `read` with it. */
      scopes: ReadonlySet<Scope>;
    };

export type Scope = 'read' | 'write';

/**
 * Who is calling before any workspace is chosen: an API key (always bound to its workspace), or a
 * Bearer token's user with its scopes. Set on routes that declare `config.auth: { credentialOnly }`
 * (the MCP endpoint, where a person names the workspace per tool call).
 */
export type Caller =
  | Extract<Principal, { kind: 'apiKey' }>
  | {
      kind: 'user';
      userId: string;
      scopes: ReadonlySet<Scope>;
    };

/** Parses the `scope` claim: space-delimited string (RFC 8693 / RFC 9068), or an array of strings. */
export function scopesOf(claim: unknown): ReadonlySet<Scope> {
  const words = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
  const scopes = new Set<Scope>();
  for (const word of words) {
    if (word === 'write') {
      scopes.add('write');
      scopes.add('read');
    } else if (word === 'read') {
      scopes.add('read');
    }
  }
  return scopes;
}

const readMethods = new Set(['GET', 'HEAD']);

/** The scope a request needs: GET/HEAD read, every other method writes. */
export function requiredScope(method: string): Scope {
  return readMethods.has(method) ? 'read' : 'write';
}

/** True when the principal may make a request with this method (API keys always may). */
export function allows(principal: Principal, method: string): boolean {
  return principal.kind === 'apiKey' || principal.scopes.has(requiredScope(method));
}
