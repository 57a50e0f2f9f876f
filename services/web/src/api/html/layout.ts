import type { WorkspaceMembership } from '../../domain/people.js';
import { html, type SafeHtml } from './escape.js';

/** The signed-in person as the page header shows them. */
export interface Viewer {
  email: string;
  /** The session's CSRF token, for the sign-out form (and every other form). */
  csrfToken: string;
  workspaces: WorkspaceMembership[];
  /** The url id of the workspace the page belongs to, if any. */
  current?: string;
}

export const csrfField = (token: string): SafeHtml => html`<input type="hidden" name="_csrf" value="${token}">`;

function switcher(viewer: Viewer): SafeHtml {
  const current = viewer.workspaces.find((workspace) => workspace.urlId === viewer.current);
  return html`<details class="switcher">
      <summary>${current ? current.name : 'Your workspaces'}<span class="visually-hidden">: switch workspace</span></summary>
      <ul>
        ${viewer.workspaces.map(
          (workspace) =>
            html`<li><a href="/${workspace.urlId}/settings"${workspace.urlId === viewer.current ? html` aria-current="page"` : ''}>${workspace.name}</a></li>`,
        )}
        <li><a href="/workspaces">All your workspaces</a></li>
      </ul>
    </details>`;
}

/** Every page: one stylesheet, no script (but the one page that names a same-origin `script`), a skip link, the header (workspace switcher, sign-out). */
export function layout(options: { title: string; viewer?: Viewer | undefined; body: SafeHtml; script?: string }): SafeHtml {
  const { viewer } = options;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Task Workspace</title>
<link rel="stylesheet" href="/assets/app.css">
${options.script ? html`<script src="${options.script}" defer></script>\n` : ''}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/">Task Workspace</a>
  ${viewer
    ? html`<nav aria-label="Account">
    ${viewer.workspaces.length > 0 ? switcher(viewer) : ''}
    <a href="/account/connected-apps">Connected apps</a>
    <span class="who">${viewer.email}</span>
    <form method="post" action="/auth/sign-out" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="link">Sign out</button></form>
  </nav>`
    : ''}
</header>
<main id="main" tabindex="-1">
${options.body}
</main>
</body>
</html>
`;
}
