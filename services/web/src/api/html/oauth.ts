import type { GrantRow } from '../../store/oauth-models.js';
import { html, type SafeHtml } from './escape.js';
import { csrfField, layout, type Viewer } from './layout.js';
import { when } from './settings.js';

export const connectedAppsPath = '/account/connected-apps';

/** What the consent page shows of the app asking for access. */
export interface ConsentRequest {
  uid: string;
  clientId: string;
  /** The client's registered name, if any (a name chosen by whoever registered it: shown as such). */
  clientName: string | undefined;
  /** The host the browser is sent back to: the real identity of the app. */
  redirectHost: string;
  /** Whether the app asked to change things (`write`) or only to read. */
  wantsWrite: boolean;
}

/** A grant's scopes in words: "Read and write" or "Read only". */
export function accessInWords(resources: Record<string, string>): string {
  const scopes = new Set(Object.values(resources).flatMap((scope) => scope.split(' ')));
  if (scopes.has('write')) return scopes.has('read') ? 'Read and write' : 'Write';
  return scopes.has('read') ? 'Read only' : 'No access';
}

/** The consent page: who asks, where the browser goes back to, and the choice of read or read + write. */
export function consentPage(viewer: Viewer, request: ConsentRequest): SafeHtml {
  const name = request.clientName ?? request.clientId;
  return layout({
    title: `Allow ${name}?`,
    viewer,
    body: html`<section class="card narrow" aria-labelledby="consent-title">
  <h1 id="consent-title">Allow <span class="url">${name}</span> to use your workspaces?</h1>
  <p>An app calling itself <strong class="url">${name}</strong> asks to use the Task Workspace API as you (${viewer.email}), in every workspace you belong to (${viewer.workspaces.length}).</p>
  <p>After you answer, you go back to <strong class="url">${request.redirectHost}</strong>. If you do not recognise this address, or did not start connecting an app just now, choose <em>Deny</em>.</p>
  <form method="post" action="/oauth/interaction/${request.uid}" class="stack">
    ${csrfField(viewer.csrfToken)}
    <fieldset>
      <legend>What may it do?</legend>
      <label class="check"><input type="radio" name="access" value="read" checked> Read only: see workspaces, projects, tasks and comments</label>
      ${request.wantsWrite ? html`<label class="check"><input type="radio" name="access" value="read write"> Read and write: also create, change and delete tasks, projects and comments</label>` : ''}
    </fieldset>
    <p class="hint">You can disconnect it at any time in <a href="${connectedAppsPath}">Connected apps</a>.</p>
    <p class="actions"><button type="submit" name="decision" value="allow" class="button">Allow</button>
    <button type="submit" name="decision" value="deny" class="danger">Deny</button></p>
  </form>
</section>`,
  });
}

export type ConnectedAppsNotice = 'revoked' | undefined;

/** The person's connected apps: each grant with its access, when it was given, and a disconnect button. */
export function connectedAppsPage(viewer: Viewer, grants: GrantRow[], notice: ConnectedAppsNotice): SafeHtml {
  return layout({
    title: 'Connected apps',
    viewer,
    body: html`<h1>Connected apps</h1>
${notice === 'revoked' ? html`<p class="notice" role="status">The app was disconnected: its tokens no longer work.</p>` : ''}
<p>Apps you allowed to use the Task Workspace API as you (for example AI assistants connected through MCP). Disconnecting one stops its access in every workspace.</p>
${grants.length === 0
  ? html`<p class="card">No app is connected.</p>`
  : html`<ul class="sections">
  ${grants.map(
    (grant) => html`<li class="card">
    <h2 class="url">${grant.clientName ?? grant.clientId}</h2>
    <p class="meta">${accessInWords(grant.resources)} · connected ${when(grant.grantedAt.toISOString(), 'unknown')}</p>
    <form method="post" action="${connectedAppsPath}/${grant.grantId}/revoke" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="danger" aria-label="Disconnect ${grant.clientName ?? grant.clientId}">Disconnect</button></form>
  </li>`,
  )}
</ul>`}`,
  });
}
