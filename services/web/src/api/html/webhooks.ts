import type { WorkspaceMembership } from '../../domain/people.js';
import {
  maxSecretLength,
  maxUrlLength,
  webhookEventKinds,
  type AttemptRow,
  type DeliveryPage,
  type DeliveryRow,
  type EndpointRow,
  type WebhookDraft,
  type WebhookField,
  type WebhookFormError,
} from '../../domain/webhooks.js';
import { html, type SafeHtml } from './escape.js';
import { csrfField, layout, type Viewer } from './layout.js';
import { breadcrumbs, inWorkspace, settingsPath, when } from './settings.js';

export type WebhooksNotice = 'created' | 'deleted' | undefined;
export type DeliveryLogNotice = 'redelivered' | undefined;

export const webhooksPath = (workspace: WorkspaceMembership): string => `${settingsPath(workspace)}/webhooks`;
export const webhookPath = (workspace: WorkspaceMembership, endpointId: string): string => `${webhooksPath(workspace)}/${endpointId}`;

const eventsText = (events: readonly string[]): string => (events.length === 0 ? 'all events' : events.join(', '));

const notices: Record<Exclude<WebhooksNotice, undefined>, string> = {
  created: 'The webhook was added. Its secret is kept for signing and is never shown again.',
  deleted: 'The webhook was deleted: it receives no more events, and its pending retries stop.',
};

/** A field's error paragraph and the attributes that tie the field to its hint and error. */
function fieldState(field: WebhookField, hintId: string | undefined, error: WebhookFormError | undefined, focus = true) {
  const errorId = `webhook-${field}-error`;
  const failed = error?.field === field;
  const describedBy = [hintId, failed ? errorId : undefined].filter(Boolean).join(' ');
  return {
    message: failed ? html`<p class="error" id="${errorId}">${error.message}</p>` : '',
    attributes: html`${describedBy ? html` aria-describedby="${describedBy}"` : ''}${failed ? html` aria-invalid="true"${focus ? ' autofocus' : ''}` : ''}`,
  };
}

/** The add form. After a refusal it shows the URL and events again, never the secret. */
function addForm(viewer: Viewer, workspace: WorkspaceMembership, form?: { draft: WebhookDraft; error: WebhookFormError }): SafeHtml {
  const url = fieldState('url', 'webhook-url-hint', form?.error);
  const secret = fieldState('secret', 'webhook-secret-hint', form?.error);
  const events = fieldState('events', undefined, form?.error, false);
  return html`<section class="card" aria-labelledby="add-title">
  <h2 id="add-title">Add a webhook</h2>
  <form method="post" action="${webhooksPath(workspace)}" class="stack webhook-form">
    ${csrfField(viewer.csrfToken)}
    <label for="webhook-url">Endpoint URL</label>
    <p class="hint" id="webhook-url-hint">An https:// address on the public internet, e.g. https://hooks.example.com/task-workspace. Addresses of this machine or of private networks are refused.</p>
    ${url.message}
    <input id="webhook-url" name="url" type="url" required maxlength="${maxUrlLength}" autocomplete="off" spellcheck="false" inputmode="url"${url.attributes} value="${form?.draft.url ?? ''}">
    <label for="webhook-secret">Secret</label>
    <p class="hint" id="webhook-secret-hint">1 to ${maxSecretLength} characters. Each delivery is signed with it (<code>X-Service-Signature</code>: HMAC-SHA256 of the body); keep a copy for your receiver, it is never shown again.</p>
    ${secret.message}
    <input id="webhook-secret" name="secret" type="password" required maxlength="${maxSecretLength}" autocomplete="new-password"${secret.attributes}>
    <fieldset${events.attributes}>
      <legend>Events</legend>
      <p class="hint">None chosen: all three.</p>
      ${events.message}
      ${webhookEventKinds.map(
        (kind) =>
          html`<label class="check"><input type="checkbox" name="events" value="${kind}"${form?.draft.events.includes(kind) ? ' checked' : ''}> <code>${kind}</code></label>`,
      )}
    </fieldset>
    <p><button type="submit" class="button">Add webhook</button></p>
  </form>
</section>`;
}

function endpointTable(viewer: Viewer, workspace: WorkspaceMembership, endpoints: EndpointRow[]): SafeHtml {
  if (endpoints.length === 0) return html`<p>This workspace has no webhooks yet.</p>`;
  return html`<div class="table-wrap"><table>
  <caption class="visually-hidden">Webhooks</caption>
  <thead><tr><th scope="col">Endpoint URL</th><th scope="col">Events</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
  ${endpoints.map(
    (endpoint) => html`<tr>
    <th scope="row" class="url"><a href="${webhookPath(workspace, endpoint.id)}" aria-label="Delivery log of ${endpoint.url}">${endpoint.url}</a></th>
    <td data-label="Events">${eventsText(endpoint.events)}${endpoint.disabled ? html` <strong class="error" title="${endpoint.disabled.reason === 'failing' ? 'every attempt failed for days' : 'disabled through the API'}">disabled</strong>` : ''}</td>
    <td data-label="Created">${when(endpoint.createdAt, '—')}</td>
    <td><form method="post" action="${webhookPath(workspace, endpoint.id)}/delete" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="danger" aria-label="Delete the webhook ${endpoint.url}">Delete</button></form></td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

/** The webhooks of a workspace (owners and members): the list and the add form. */
export function webhooksPage(
  viewer: Viewer,
  workspace: WorkspaceMembership,
  listed: { endpoints: EndpointRow[]; truncated: boolean },
  options: { notice?: WebhooksNotice; form?: { draft: WebhookDraft; error: WebhookFormError } } = {},
): SafeHtml {
  return layout({
    title: `Webhooks · ${workspace.name}`,
    viewer: inWorkspace(viewer, workspace),
    body: html`${breadcrumbs(workspace, 'Webhooks')}
<h1>Webhooks <span class="sub">${workspace.name}</span></h1>
${options.notice ? html`<p class="notice" role="status">${notices[options.notice]}</p>` : ''}
<p>A webhook sends each task change of this workspace to your HTTPS endpoint as a signed POST, retried up to 5 times. Open a webhook to see its deliveries and send one again.</p>
${addForm(viewer, workspace, options.form)}
<section class="card" aria-labelledby="list-title">
  <h2 id="list-title">Webhooks of this workspace</h2>
  ${endpointTable(viewer, workspace, listed.endpoints)}
  ${listed.truncated ? html`<p class="hint">Only the first ${listed.endpoints.length} webhooks are shown. Delete webhooks you no longer use to see the others.</p>` : ''}
</section>`,
  });
}

const stateText: Record<DeliveryRow['state'], string> = { pending: 'Pending', succeeded: 'Succeeded', failed: 'Failed', cancelled: 'Cancelled' };
const outcomeText: Record<AttemptRow['outcome'], string> = { succeeded: 'Succeeded', failed: 'Failed', blocked: 'Blocked (private address)' };

function attemptsTable(delivery: DeliveryRow): SafeHtml {
  if (delivery.attempts.length === 0) return html`<p class="hint">No attempt yet.</p>`;
  return html`<div class="table-wrap"><table class="attempts">
  <caption class="visually-hidden">Attempts of delivery ${delivery.eventId}</caption>
  <thead><tr><th scope="col">Attempt</th><th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Outcome</th><th scope="col">Status code</th><th scope="col">Error</th></tr></thead>
  <tbody>
  ${delivery.attempts.map(
    (attempt) => html`<tr>
    <th scope="row" data-label="Attempt">${attempt.attempt}</th>
    <td data-label="Started">${when(attempt.startedAt, '—')}</td>
    <td data-label="Duration">${attempt.durationMs} ms</td>
    <td data-label="Outcome" class="outcome-${attempt.outcome}">${outcomeText[attempt.outcome]}</td>
    <td data-label="Status code">${attempt.statusCode ?? '—'}</td>
    <td data-label="Error">${attempt.error ?? '—'}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

function deliveryCard(viewer: Viewer, workspace: WorkspaceMembership, endpointId: string, delivery: DeliveryRow): SafeHtml {
  return html`<li class="card delivery" aria-labelledby="delivery-${delivery.id}">
  <h3 id="delivery-${delivery.id}"><code>${delivery.event}</code> <span class="state state-${delivery.state}">${stateText[delivery.state]}</span></h3>
  <dl class="facts">
    <div><dt>Event id</dt><dd><code>${delivery.eventId}</code></dd></div>
    <div><dt>Created</dt><dd>${when(delivery.createdAt, '—')}</dd></div>
    <div><dt>Next attempt</dt><dd>${delivery.nextAttemptAt ? html`${delivery.nextAttempt ? `attempt ${delivery.nextAttempt}, ` : ''}${when(delivery.nextAttemptAt, '—')}` : html`<span class="hint">None</span>`}</dd></div>
    ${delivery.redeliveryOf ? html`<div><dt>Sent again from</dt><dd><code>${delivery.redeliveryOf}</code></dd></div>` : ''}
  </dl>
  ${attemptsTable(delivery)}
  <form method="post" action="${webhookPath(workspace, endpointId)}/deliveries/${delivery.id}/redeliver" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="secondary" aria-label="Send the ${delivery.event} delivery ${delivery.eventId} again">Redeliver</button></form>
</li>`;
}

/** The delivery log of one webhook: its deliveries, newest first, each with every attempt; a redeliver button each. */
export function deliveryLogPage(
  viewer: Viewer,
  workspace: WorkspaceMembership,
  endpoint: EndpointRow,
  page: DeliveryPage,
  options: { notice?: DeliveryLogNotice; olderThanFirstPage?: boolean } = {},
): SafeHtml {
  const here = webhookPath(workspace, endpoint.id);
  return layout({
    title: `Delivery log · ${endpoint.url} · ${workspace.name}`,
    viewer: inWorkspace(viewer, workspace),
    body: html`<nav aria-label="Breadcrumb" class="crumbs"><a href="${settingsPath(workspace)}">Settings</a> › <a href="${webhooksPath(workspace)}">Webhooks</a> › <span aria-current="page">Delivery log</span></nav>
<h1>Delivery log <span class="sub url">${endpoint.url}</span></h1>
${options.notice === 'redelivered' ? html`<p class="notice" role="status">The delivery is being sent again: the new delivery is at the top, with the same event id. Reload to see its attempt.</p>` : ''}
<p class="meta">Events: ${eventsText(endpoint.events)} · created ${when(endpoint.createdAt, '—')}</p>
<p>Deliveries, newest first, with each attempt. A failed attempt is retried after 5 minutes, 30 minutes, 2 hours and 8 hours; <em>Redeliver</em> sends one again now, as a new delivery with the same event id.</p>
${page.deliveries.length === 0
  ? html`<p class="card">${options.olderThanFirstPage ? 'There are no older deliveries.' : 'No deliveries yet: they appear here when a task of this workspace changes.'}</p>`
  : html`<ol class="deliveries">${page.deliveries.map((delivery) => deliveryCard(viewer, workspace, endpoint.id, delivery))}</ol>`}
<nav aria-label="Pages of the delivery log" class="pager">
  ${options.olderThanFirstPage ? html`<a href="${here}">Newest deliveries</a>` : ''}
  ${page.nextPageToken ? html`<a href="${here}?page=${encodeURIComponent(page.nextPageToken)}" rel="next">Older deliveries</a>` : ''}
</nav>`,
  });
}
