import type { ApiKeyRow, CreatedApiKey } from '../../domain/api-keys.js';
import { maxKeyNameLength } from '../../domain/api-keys.js';
import type { WorkspaceMembership } from '../../domain/people.js';
import { html, type SafeHtml } from './escape.js';
import { csrfField, layout, type Viewer } from './layout.js';

/** The one script of the app: the copy button of the page that shows a new key (see assets.ts). */
export const copyKeyScript = '/assets/copy-key.js';

export type ApiKeysNotice = 'revoked' | undefined;

export const inWorkspace = (viewer: Viewer, workspace: WorkspaceMembership): Viewer => ({ ...viewer, current: workspace.urlId });
export const settingsPath = (workspace: WorkspaceMembership): string => `/${workspace.urlId}/settings`;
export const apiKeysPath = (workspace: WorkspaceMembership): string => `${settingsPath(workspace)}/api-keys`;

/** An RFC 3339 instant as a readable UTC time, in a <time> element. */
export function when(instant: string | undefined, none: string): SafeHtml {
  if (!instant) return html`<span class="hint">${none}</span>`;
  const date = new Date(instant);
  if (Number.isNaN(date.getTime())) return html`${instant}`;
  const text = `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return html`<time datetime="${date.toISOString()}">${text}</time>`;
}

const prefixText = (key: ApiKeyRow): string => `${key.prefix || 'tws_'}…`;

export function breadcrumbs(workspace: WorkspaceMembership, here?: string): SafeHtml {
  return html`<nav aria-label="Breadcrumb" class="crumbs"><a href="${settingsPath(workspace)}">Settings</a>${here ? html` › <span aria-current="page">${here}</span>` : ''}</nav>`;
}

/** The settings index of a workspace (owners and members): its sections, API keys first. */
export function settingsIndexPage(viewer: Viewer, workspace: WorkspaceMembership): SafeHtml {
  return layout({
    title: `${workspace.name} settings`,
    viewer: inWorkspace(viewer, workspace),
    body: html`<h1>${workspace.name} <span class="sub">settings</span></h1>
<ul class="sections">
  <li class="card"><h2><a href="${apiKeysPath(workspace)}">API keys</a></h2>
    <p class="meta">${workspace.role === 'owner' ? 'Create keys for the API, and see and revoke every key of the workspace.' : 'Create keys for the API, and see and revoke the keys you created.'}</p></li>
  <li class="card"><h2><a href="${settingsPath(workspace)}/webhooks">Webhooks</a></h2>
    <p class="meta">Send task changes to your HTTPS endpoints: add and delete webhooks, see each delivery and its attempts, send one again.</p></li>
  <li class="card"><h2><a href="${settingsPath(workspace)}/labels">Labels</a></h2>
    <p class="meta">Create, rename, recolour and delete the labels people put on tasks.</p></li>
  <li class="card"><h2><a href="${settingsPath(workspace)}/members">Members</a></h2>
    <p class="meta">${workspace.role === 'owner' ? 'See who belongs to the workspace; add people by email, change their role or remove them.' : 'See who belongs to the workspace and their role.'} Operators can also manage members with the admin CLI (<code>tws-admin</code>).</p></li>
</ul>`,
  });
}

function createForm(viewer: Viewer, workspace: WorkspaceMembership, error?: { message: string; name: string }): SafeHtml {
  return html`<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">Create an API key</h2>
  <form method="post" action="${apiKeysPath(workspace)}" class="stack">
    ${csrfField(viewer.csrfToken)}
    <label for="key-name">Name</label>
    <p class="hint" id="key-name-hint">What the key is for, e.g. “CI deploys”. 1 to ${maxKeyNameLength} characters.</p>
    ${error ? html`<p class="error" id="key-name-error">${error.message}</p>` : ''}
    <input id="key-name" name="name" type="text" required maxlength="${maxKeyNameLength}" autocomplete="off"
      aria-describedby="key-name-hint${error ? ' key-name-error' : ''}"${error ? html` aria-invalid="true" autofocus` : ''} value="${error?.name ?? ''}">
    <p><button type="submit" class="button">Create key</button></p>
  </form>
</section>`;
}

function keyTable(viewer: Viewer, workspace: WorkspaceMembership, keys: ApiKeyRow[]): SafeHtml {
  if (keys.length === 0) return html`<p>${workspace.role === 'owner' ? 'This workspace has no API keys.' : 'You have no API keys yet.'}</p>`;
  return html`<div class="table-wrap"><table>
  <caption class="visually-hidden">API keys</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Created by</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
  ${keys.map(
    (key) => html`<tr>
    <th scope="row">${key.name}</th>
    <td data-label="Prefix"><code>${prefixText(key)}</code></td>
    <td data-label="Created by">${key.createdByName}${key.createdByUserId === workspace.userId ? html` <span class="hint">(you)</span>` : ''}</td>
    <td data-label="Created">${when(key.createdAt, '—')}</td>
    <td data-label="Last used">${when(key.lastUsedAt, 'Never')}</td>
    <td><form method="post" action="${apiKeysPath(workspace)}/${key.id}/revoke" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="danger" aria-label="Revoke the key ${key.name} (${prefixText(key)})">Revoke</button></form></td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

/** The API keys of a workspace: the list the person may manage, and the create form. */
export function apiKeysPage(
  viewer: Viewer,
  workspace: WorkspaceMembership,
  listed: { keys: ApiKeyRow[]; truncated: boolean },
  options: { notice?: ApiKeysNotice; error?: { message: string; name: string } } = {},
): SafeHtml {
  return layout({
    title: `API keys · ${workspace.name}`,
    viewer: inWorkspace(viewer, workspace),
    body: html`${breadcrumbs(workspace, 'API keys')}
<h1>API keys <span class="sub">${workspace.name}</span></h1>
${options.notice === 'revoked' ? html`<p class="notice" role="status">The key was revoked. Requests with it are refused from now on.</p>` : ''}
<p>An API key lets a program use the API as you. ${workspace.role === 'owner' ? 'As an owner you see every key of the workspace and can revoke any of them.' : 'You see the keys you created; an owner can see and revoke every key.'}
Revoking a key stops it at once: the next request with it is refused.</p>
${createForm(viewer, workspace, options.error)}
<section class="card" aria-labelledby="list-title">
  <h2 id="list-title">${workspace.role === 'owner' ? 'Keys of this workspace' : 'Your keys'}</h2>
  ${keyTable(viewer, workspace, listed.keys)}
  ${listed.truncated ? html`<p class="hint">Only the ${listed.keys.length} newest keys are shown. Revoke keys you no longer use to see older ones.</p>` : ''}
</section>`,
  });
}

/** The new key, shown once: a readonly input (select and copy without JS) and a copy button (JS). */
export function createdKeyPage(viewer: Viewer, workspace: WorkspaceMembership, created: CreatedApiKey): SafeHtml {
  return layout({
    title: `New API key · ${workspace.name}`,
    viewer: inWorkspace(viewer, workspace),
    script: copyKeyScript,
    body: html`${breadcrumbs(workspace, 'API keys')}
<section class="card" aria-labelledby="new-key-title">
  <h1 id="new-key-title">Your new API key “${created.row.name}”</h1>
  <p class="notice" role="status">Copy the key now: it is shown only this once. If you lose it, revoke it and create another.</p>
  <label for="new-key">API key</label>
  <input id="new-key" class="mono key" type="text" readonly value="${created.key}" autofocus spellcheck="false" autocomplete="off">
  <p><button type="button" class="button" data-copy-target="new-key" hidden>Copy key</button> <span class="hint" id="copy-status" role="status" aria-live="polite"></span></p>
  <p class="hint">Send it in the <code>X-API-Key</code> header of each API request.</p>
  <p><a href="${apiKeysPath(workspace)}">Done: back to the API keys</a></p>
</section>`,
  });
}
