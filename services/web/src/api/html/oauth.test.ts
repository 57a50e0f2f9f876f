import { describe, expect, it } from 'vitest';
import type { Viewer } from './layout.js';
import { accessInWords, connectedAppsPage, consentPage } from './oauth.js';

const viewer: Viewer = {
  email: 'm@example.com',
  csrfToken: 'tok"en',
  workspaces: [{ workspaceId: 'w1', urlId: 'acme', name: 'Acme', userId: 'u1', role: 'member' }],
};

describe('the consent page', () => {
  it('names the client (escaped) and its redirect host, and offers read write only when asked', () => {
    const out = consentPage(viewer, { uid: 'abc', clientId: 'c1', clientName: '<script>x</script>', redirectHost: 'tool.example:8443', wantsWrite: true }).value;
    expect(out).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(out).not.toContain('<script>x');
    expect(out).toContain('<strong class="url">tool.example:8443</strong>');
    expect(out).toContain('action="/oauth/interaction/abc"');
    expect(out).toContain('name="_csrf" value="tok&quot;en"');
    expect(out).toContain('value="read" checked');
    expect(out).toContain('value="read write"');
    expect(out).toContain('value="deny"');
    const readOnly = consentPage(viewer, { uid: 'abc', clientId: 'c1', clientName: undefined, redirectHost: 'h', wantsWrite: false }).value;
    expect(readOnly).not.toContain('value="read write"');
    // Without a name, the client id stands in.
    expect(readOnly).toContain('Allow <span class="url">c1</span>');
  });
});

describe('connected apps', () => {
  it('lists each grant with its access in words and a disconnect form, or says there is none', () => {
    const grant = { grantId: 'g1', clientId: 'c1', clientName: 'Tool <b>', resources: { 'https://api.example.com': 'read' }, grantedAt: new Date('2026-01-02T03:04:00Z') };
    const out = connectedAppsPage(viewer, [grant], 'revoked').value;
    expect(out).toContain('Tool &lt;b&gt;');
    expect(out).toContain('Read only · connected <time datetime="2026-01-02T03:04:00.000Z">2026-01-02 03:04 UTC</time>');
    expect(out).toContain('action="/account/connected-apps/g1/revoke"');
    expect(out).toContain('The app was disconnected');
    expect(connectedAppsPage(viewer, [], undefined).value).toContain('No app is connected.');
  });

  it('says the access in words', () => {
    expect(accessInWords({ a: 'read write' })).toBe('Read and write');
    expect(accessInWords({ a: 'read' })).toBe('Read only');
    expect(accessInWords({})).toBe('No access');
  });
});
