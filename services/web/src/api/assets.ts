import type { FastifyInstance } from 'fastify';

/**
 * The one stylesheet (no inline styles: the CSP allows styles from this origin only). Colours keep
 * a contrast of at least 4.5:1 (text) and 3:1 (focus ring); the layout is a single column that
 * holds at a phone's 320 px width.
 */
const stylesheet = `
*,*::before,*::after{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1b1f24;background:#f6f7f9}
body{margin:0}
a{color:#1d4ed8}
a:hover{color:#1e3a8a}
:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem}
.skip:focus{left:.5rem;z-index:10}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.75rem 1rem;background:#fff;border-bottom:1px solid #d0d7de}
.brand{font-weight:700;text-decoration:none;color:#1b1f24}
.top nav{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
.who{color:#4b5563;overflow-wrap:anywhere}
main{max-width:48rem;margin:0 auto;padding:1.5rem 1rem}
main:focus{outline:none}
h1{font-size:1.6rem;margin:0 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:0;overflow-wrap:anywhere}
.sub{font-weight:400;color:#4b5563}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.25rem;margin:0 0 1rem}
.narrow{max-width:32rem;margin:2rem auto}
.workspaces{list-style:none;padding:0;margin:0}
.meta,.hint{color:#4b5563;margin:.25rem 0 0}
.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.95em}
.notice{background:#ecfdf5;border:1px solid #047857;color:#065f46;padding:.5rem .75rem;border-radius:6px}
.button{display:inline-block;background:#1d4ed8;color:#fff;padding:.6rem 1.1rem;border-radius:6px;text-decoration:none;font-weight:600;border:0;font:inherit;cursor:pointer}
.button:hover{background:#1e3a8a;color:#fff}
button.link{background:none;border:0;padding:0;font:inherit;color:#1d4ed8;text-decoration:underline;cursor:pointer}
form.inline{display:inline}
.switcher{position:relative}
.switcher summary{cursor:pointer;color:#1d4ed8;text-decoration:underline}
.switcher ul{position:absolute;right:0;z-index:5;min-width:14rem;max-width:90vw;margin:.25rem 0 0;padding:.5rem;list-style:none;background:#fff;border:1px solid #d0d7de;border-radius:6px}
.switcher li{padding:.25rem}
.switcher a[aria-current]{font-weight:700}
`;

/** GET /assets/app.css, cached for an hour. */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  app.get('/assets/app.css', { config: { session: false } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(stylesheet),
  );
}
