import { describe, expect, it } from 'vitest';
import type { WorkspaceMembership } from '../../domain/people.js';
import type { DeliveryRow } from '../../domain/webhooks.js';
import type { Viewer } from './layout.js';
import { deliveryLogPage, webhooksPage } from './webhooks.js';

const workspace: WorkspaceMembership = { workspaceId: 'w1', urlId: 'acme', name: 'Acme <b>', userId: 'u1', role: 'owner' };
const viewer: Viewer = { email: 'owner@example.com', csrfToken: 'tok', workspaces: [workspace] };
const endpoint = { id: '7f0c2a7e-2f7a-4a43-9d51-1f0d0c7e9a11', url: 'https://a.example/"><script>x</script>', events: ['task.created', 'task.updated'], createdAt: '2026-01-02T03:04:05.000Z' };
const delivery: DeliveryRow = {
  id: '0b7e2f3c-5d1a-4c4e-8a8e-2b6f7c9d0e12',
  eventId: 'evt_1',
  event: 'task.created',
  state: 'failed',
  createdAt: '2026-01-02T03:04:05.000Z',
  redeliveryOf: undefined,
  nextAttempt: undefined,
  nextAttemptAt: undefined,
  attempts: [{ attempt: 1, startedAt: '2026-01-02T03:04:05.000Z', durationMs: 31, outcome: 'failed', statusCode: 502, error: '<bad gateway>' }],
};

describe('webhooks pages', () => {
  it('the list: escaped URLs, a delete form with the CSRF token each, a labelled add form with a password field and the three kinds', () => {
    const page = webhooksPage(viewer, workspace, { endpoints: [endpoint], truncated: false }).toString();
    expect(page).not.toContain('<script>x');
    expect(page).toContain('https://a.example/&quot;&gt;&lt;script&gt;x&lt;/script&gt;');
    expect(page).toContain(`action="/acme/settings/webhooks/${endpoint.id}/delete"`);
    expect(page.match(/name="_csrf" value="tok"/g)?.length).toBe(3); // sign-out, add, delete
    expect(page).toContain('<label for="webhook-url">Endpoint URL</label>');
    expect(page).toMatch(/<input id="webhook-secret" name="secret" type="password" required maxlength="1024" autocomplete="new-password" aria-describedby="webhook-secret-hint">/);
    expect(page).toContain('1 to 1024 characters.');
    for (const kind of ['task.created', 'task.updated', 'task.completed']) expect(page).toContain(`name="events" value="${kind}">`);
    expect(page).toContain('<td data-label="Events">task.created, task.updated</td>');
  });

  it('a disabled endpoint is marked "disabled", with why in its title', () => {
    const disabled = { ...endpoint, disabled: { at: '2026-01-05T00:00:00.000Z', reason: 'failing' as const } };
    const page = webhooksPage(viewer, workspace, { endpoints: [disabled, { ...endpoint, id: 'other' }], truncated: false }).toString();
    expect(page.match(/>disabled<\/strong>/g)?.length).toBe(1);
    expect(page).toContain('<strong class="error" title="every attempt failed for days">disabled</strong>');
  });

  it('a refusal: the sentence at its field, the URL and events kept, the secret field empty', () => {
    const page = webhooksPage(viewer, workspace, { endpoints: [], truncated: false }, {
      form: { draft: { url: 'https://10.0.0.1/x', events: ['task.completed'] }, error: { field: 'url', message: 'This address leads to a private network.' } },
    }).toString();
    expect(page).toContain('<p class="error" id="webhook-url-error">This address leads to a private network.</p>');
    expect(page).toContain('aria-describedby="webhook-url-hint webhook-url-error" aria-invalid="true" autofocus value="https://10.0.0.1/x"');
    expect(page).toContain('value="task.completed" checked>');
    expect(page).not.toMatch(/name="secret"[^>]*value=/);
  });

  it('the delivery log: each delivery with its attempts (escaped error), a redeliver form, the older-deliveries link', () => {
    const page = deliveryLogPage(viewer, workspace, endpoint, { deliveries: [delivery], nextPageToken: 'ZGVm' }, { olderThanFirstPage: true }).toString();
    expect(page).toContain('<span class="state state-failed">Failed</span>');
    expect(page).toContain('<td data-label="Status code">502</td>');
    expect(page).toContain('<td data-label="Error">&lt;bad gateway&gt;</td>');
    expect(page).toContain('<td data-label="Duration">31 ms</td>');
    expect(page).toContain(`action="/acme/settings/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver"`);
    expect(page).toContain(`<a href="/acme/settings/webhooks/${endpoint.id}?page=ZGVm" rel="next">Older deliveries</a>`);
    expect(page).toContain(`<a href="/acme/settings/webhooks/${endpoint.id}">Newest deliveries</a>`);
  });
});
