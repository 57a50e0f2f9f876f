import type { WorkspaceMembership } from '../../domain/people.js';
import { html, type SafeHtml } from './escape.js';
import { layout, type Viewer } from './layout.js';

const roleNames = { owner: 'Owner', member: 'Member', guest: 'Guest' } as const;

export type LandingNotice = 'signed-out' | 'session-ended' | undefined;

const notices: Record<Exclude<LandingNotice, undefined>, string> = {
  'signed-out': 'You are signed out.',
  'session-ended': 'Your session ended. Sign in again to continue.',
};

/** The sign-in landing page; `returnTo` is already checked (same-origin path) or absent. */
export function landingPage(options: { returnTo?: string | undefined; notice?: LandingNotice }): SafeHtml {
  const href = options.returnTo ? `/auth/sign-in?returnTo=${encodeURIComponent(options.returnTo)}` : '/auth/sign-in';
  return layout({
    title: 'Sign in',
    body: html`<section class="card narrow">
  ${options.notice ? html`<p class="notice" role="status">${notices[options.notice]}</p>` : ''}
  <h1>Sign in</h1>
  <p>Sign in with your organisation's account to reach your workspaces, their settings and tasks.</p>
  <p><a class="button" href="${href}">Sign in with your organisation</a></p>
  <p class="hint">You are sent to your organisation's identity provider and back. This app never sees your password.</p>
</section>`,
  });
}

export function workspacesPage(viewer: Viewer): SafeHtml {
  return layout({
    title: 'Your workspaces',
    viewer,
    body: html`<h1>Your workspaces</h1>
<p>Signed in as <strong>${viewer.email}</strong>. Choose a workspace:</p>
<ul class="workspaces">
  ${viewer.workspaces.map(
    (workspace: WorkspaceMembership) => html`<li class="card">
    <h2><a href="/${workspace.urlId}/settings">${workspace.name}</a></h2>
    <p class="meta">Your role: ${roleNames[workspace.role]} · <span class="mono">${workspace.urlId}</span></p>
  </li>`,
  )}
</ul>`,
  });
}

/** Every error and the 404: a title and a sentence that says what to do. */
export function errorPage(options: { title: string; message: string; viewer?: Viewer | undefined; signInAgain?: boolean }): SafeHtml {
  return layout({
    title: options.title,
    viewer: options.viewer,
    body: html`<section class="card narrow" aria-labelledby="error-title">
  <h1 id="error-title">${options.title}</h1>
  <p>${options.message}</p>
  <p>${options.signInAgain ? html`<a class="button" href="/auth/sign-in">Sign in again</a> ` : ''}<a href="${options.viewer ? '/workspaces' : '/'}">${options.viewer ? 'Go to your workspaces' : 'Go to the start page'}</a></p>
</section>`,
  });
}
