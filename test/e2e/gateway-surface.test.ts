import { readFileSync } from 'node:fs';
import { importPKCS8, SignJWT } from 'jose';
import { describe, expect, inject, test } from 'vitest';
import { localStack } from '@tws/devstack';
import { api } from '../support/api.js';

/**
 * The gateway as deployed by the stack, on what it answers without backend data: error shapes,
 * authentication wiring (it trusts the development signing key), OpenAPI and docs.
 */
describe('gateway surface', () => {
  async function devToken(claims: { scope: string; sub?: string }): Promise<string> {
    const pem = readFileSync(inject('stack').devJwtPrivateKeyFile, 'utf8');
    const key = await importPKCS8(pem, localStack.devJwtAlgorithm);
    return new SignJWT({ scope: claims.scope })
      .setProtectedHeader({ alg: localStack.devJwtAlgorithm })
      .setIssuer(localStack.devJwtIssuer)
      .setAudience(localStack.devJwtAudience)
      .setSubject(claims.sub ?? '00000000-0000-4000-8000-000000000000')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
  }

  test('no credentials → 401 {"error"}', async () => {
    const response = await api('GET', '/v1/workspace');
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: expect.any(String) });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  });

  test('a token signed by the development key is accepted up to the workspace check', async () => {
    const token = await devToken({ scope: 'read' });
    // Signature, issuer and audience pass; the missing X-Workspace-Id is what is refused.
    const response = await api('GET', '/v1/workspace', { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'X-Workspace-Id header is required with a Bearer token' });
  });

  test('a forged token → 401', async () => {
    const token = await devToken({ scope: 'read write' });
    const [header, payload] = token.split('.');
    const response = await api('GET', '/v1/workspace', { headers: { authorization: `Bearer ${header}.${payload}.AAAA` } });
    expect(response.status).toBe(401);
  });

  test('unknown route → 404 {"error"}', async () => {
    const response = await api('GET', '/v1/no-such-thing');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'route GET /v1/no-such-thing not found' });
  });

  test('OpenAPI 3.1 at /openapi.json, Swagger UI at /docs', async () => {
    const spec = await api<{ openapi: string; paths: Record<string, unknown> }>('GET', '/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toBe('3.1.0');
    expect(Object.keys(spec.body.paths)).toContain('/v1/tasks/{id}');
    expect(Object.keys(spec.body.paths).some((path) => path === '/healthz' || path === '/metrics')).toBe(false);
    expect((await api('GET', '/docs/')).status).toBe(200);
  });
});
