import { createHash } from 'node:crypto';

/** The provider's pages: plain server-rendered HTML, no script, one inline style allowed by its hash. */
const style = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f5f7}
main{max-width:26rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid #d0d4da;border-radius:8px}
h1{font-size:1.4rem;margin:0 0 .25rem}
p.lead{margin:0 0 1.5rem;color:#444}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input{width:100%;padding:.6rem .7rem;font:inherit;border:1px solid #6b7280;border-radius:6px}
input:focus,button:focus,a:focus{outline:3px solid #1d4ed8;outline-offset:2px}
button{margin-top:1.5rem;width:100%;padding:.7rem;font:inherit;font-weight:600;color:#fff;background:#1d4ed8;border:0;border-radius:6px;cursor:pointer}
.error{margin:0 0 1rem;padding:.75rem 1rem;color:#7f1d1d;background:#fef2f2;border:1px solid #b91c1c;border-radius:6px}
.note{margin-top:1.5rem;font-size:.875rem;color:#444}
a{color:#1d4ed8}
`;

export const pageStyleHash = `sha256-${createHash('sha256').update(style).digest('base64')}`;

/**
 * The Content-Security-Policy the provider's pages are sent with. A form's target and every
 * redirect after it must match form-action (browsers check each hop), so the relying parties'
 * redirect origins are listed beside 'self'.
 */
export function pageCsp(redirectOrigins: readonly string[]): string {
  return [
    "default-src 'none'",
    `style-src '${pageStyleHash}'`,
    `form-action 'self' ${[...new Set(redirectOrigins)].join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Task Workspace local identity provider</title>
<style>${style}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

export interface LoginPage {
  uid: string;
  clientName: string;
  email?: string;
  error?: string;
}

export function loginPage(page: LoginPage): string {
  const action = `/interaction/${encodeURIComponent(page.uid)}/login`;
  const abort = `/interaction/${encodeURIComponent(page.uid)}/abort`;
  const error = page.error
    ? `<p class="error" role="alert" id="login-error">${escapeHtml(page.error)}</p>`
    : '';
  return layout(
    'Sign in',
    `<h1>Sign in</h1>
<p class="lead">to continue to ${escapeHtml(page.clientName)}</p>
${error}
<form method="post" action="${action}" novalidate>
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${escapeHtml(page.email ?? '')}"${page.error ? ' aria-describedby="login-error"' : ''}${page.email ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200"${page.email ? ' autofocus' : ''}>
<button type="submit">Sign in</button>
</form>
<p class="note">Local development provider: the users and their passwords are printed by <code>npm start</code>. <a href="${abort}">Cancel and go back</a></p>`,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p class="error" role="alert">${escapeHtml(message)}</p>`);
}
