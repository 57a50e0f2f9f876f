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
.crumbs{margin:0 0 .5rem;color:#4b5563}
.sections{list-style:none;padding:0;margin:0}
.stack label{display:block;font-weight:600}
input[type=text]{display:block;width:100%;max-width:30rem;padding:.5rem .6rem;font:inherit;border:1px solid #6b7280;border-radius:6px;background:#fff;color:#1b1f24}
input.key{max-width:100%;margin:.25rem 0 .5rem}
input[type=email],select{display:block;width:100%;max-width:30rem;padding:.5rem .6rem;font:inherit;border:1px solid #6b7280;border-radius:6px;background:#fff;color:#1b1f24}
form.role-change{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
form.role-change select{width:auto}
input[aria-invalid=true]{border-color:#b91c1c}
.error{color:#b91c1c;font-weight:600;margin:.25rem 0}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.5rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top;overflow-wrap:anywhere}
thead th{font-size:.9rem;color:#4b5563}
tbody th{font-weight:600}
button.danger{background:#fff;color:#b91c1c;border:1px solid #b91c1c;border-radius:6px;padding:.35rem .8rem;font:inherit;cursor:pointer;white-space:nowrap}
td code{white-space:nowrap;overflow-wrap:normal}
button.danger:hover{background:#fef2f2}
input[type=url],input[type=password]{display:block;width:100%;max-width:30rem;padding:.5rem .6rem;font:inherit;border:1px solid #6b7280;border-radius:6px;background:#fff;color:#1b1f24}
fieldset{border:1px solid #d0d7de;border-radius:6px;margin:.75rem 0 0;padding:.5rem .75rem;max-width:30rem}
legend{font-weight:600;padding:0 .25rem}
.stack label.check{font-weight:400;display:flex;gap:.5rem;align-items:center;padding:.15rem 0}
input[type=checkbox]{width:1.1rem;height:1.1rem;margin:0}
.url{overflow-wrap:anywhere;word-break:break-all}
.deliveries{list-style:none;padding:0;margin:0}
.delivery h3{font-size:1.05rem;margin:0 0 .5rem;display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline}
.facts{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;margin:0 0 .5rem}
.facts dt{color:#4b5563;font-size:.9rem}
.facts dd{margin:0;overflow-wrap:anywhere}
.facts code{white-space:normal;overflow-wrap:anywhere}
.state{font-size:.9rem;font-weight:600;border-radius:999px;padding:0 .6rem;border:1px solid currentColor}
.state-succeeded,.outcome-succeeded{color:#065f46}
.state-failed,.state-cancelled,.outcome-failed,.outcome-blocked{color:#b91c1c}
.state-pending{color:#92400e}
button.secondary{background:#fff;color:#1d4ed8;border:1px solid #1d4ed8;border-radius:6px;padding:.35rem .8rem;font:inherit;cursor:pointer;margin-top:.5rem}
button.secondary:hover{background:#eff6ff}
.pager{display:flex;gap:1rem;justify-content:space-between;margin:1rem 0}
.webhook-form input:not([type=hidden])+label{margin-top:.75rem}
@media (max-width:40rem){.attempts th[data-label]::before{content:attr(data-label) " ";font-weight:400;color:#4b5563}}
.task-facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.75rem 1.5rem;margin:0}
.done{color:#065f46;font-weight:600}
.swatch{flex:none;display:inline-block}
.rich{overflow-wrap:anywhere}
.rich h3,.rich h4,.rich h5{margin:1rem 0 .5rem}
.rich blockquote{margin:.5rem 0;padding:.1rem 1rem;border-left:4px solid #d0d7de;color:#374151}
.rich pre{background:#f3f4f6;border:1px solid #d0d7de;border-radius:6px;padding:.75rem;overflow-x:auto;white-space:pre}
.rich code{background:#f3f4f6;border-radius:4px;padding:0 .2rem}
.rich pre code{background:none;padding:0}
.files{padding-left:1.25rem;margin:0}
.files li{margin:.25rem 0;overflow-wrap:anywhere}
.files .hint{display:block}
.comments{list-style:none;padding:0;margin:0 0 1rem}
.comment{border-bottom:1px solid #d0d7de;padding:.5rem 0}
textarea{display:block;width:100%;padding:.5rem .6rem;font:inherit;border:1px solid #6b7280;border-radius:6px;background:#fff;color:#1b1f24;resize:vertical}
textarea[aria-invalid=true]{border-color:#b91c1c}
.chip{position:relative;display:inline-flex;align-items:center;gap:.25rem;max-width:100%;padding:.1rem .65rem;border-radius:999px;overflow:hidden;border:1px solid rgba(0,0,0,.25);font-size:.95rem;line-height:1.6}
.chip-fill{position:absolute;inset:0;width:100%;height:100%}
.chip-name{position:relative;overflow-wrap:break-word;word-break:normal;min-width:0}
th.label-cell{min-width:7rem}
.nowrap{white-space:nowrap}
.chip-dark{color:#000}
.chip-light{color:#fff}
.chips li{display:inline-flex;align-items:center;gap:.15rem}
button.chip-remove{background:#fff;color:#b91c1c;border:1px solid #b91c1c;border-radius:999px;min-width:1.9rem;min-height:1.9rem;padding:0 .4rem;font:inherit;font-weight:700;line-height:1;cursor:pointer}
button.chip-remove:hover{background:#fef2f2}
.chips{list-style:none;display:flex;flex-wrap:wrap;gap:.4rem;padding:0;margin:.25rem 0 .75rem}
.label-row{display:flex;flex-wrap:wrap;gap:.25rem .5rem;align-items:flex-end}
.label-row p{margin:.25rem 0}
.label-row label{font-weight:600;display:block}
.label-row input[type=text]{width:14rem;max-width:100%}
input[type=color]{display:block;width:3.25rem;height:2.4rem;padding:.15rem;border:1px solid #6b7280;border-radius:6px;background:#fff}
select{font:inherit;padding:.45rem .5rem;border:1px solid #6b7280;border-radius:6px;background:#fff;color:#1b1f24;max-width:100%}
button.secondary{background:#fff;color:#1d4ed8;border:1px solid #1d4ed8;border-radius:6px;padding:.45rem .8rem;font:inherit;cursor:pointer}
@media (max-width:40rem){thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}table,tbody,tr,th,td{display:block}tr{padding:.5rem 0;border-bottom:1px solid #d0d7de}th,td{border:0;padding:.15rem 0}td[data-label]::before{content:attr(data-label) ": ";color:#4b5563}}
`;

/**
 * The app's only script, on the page that shows a new API key once: the "Copy key" button (hidden
 * without JavaScript, where the key is selected by hand in its readonly input) copies it with
 * navigator.clipboard. That page alone allows `script-src 'self'`; every other page has none.
 */
const copyKeyScript = `"use strict";
document.querySelectorAll("button[data-copy-target]").forEach(function (button) {
  var input = document.getElementById(button.getAttribute("data-copy-target"));
  var status = document.getElementById("copy-status");
  if (!input) return;
  input.addEventListener("focus", function () { input.select(); });
  button.hidden = false;
  button.addEventListener("click", function () {
    input.focus();
    input.select();
    var done = function (text) { if (status) status.textContent = text; };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(input.value).then(
        function () { done("Copied. Paste it where your program keeps its secrets."); },
        function () { done("Copying was not allowed: the key is selected, press Ctrl+C (or \u2318C) to copy it."); });
    } else {
      done("The key is selected: press Ctrl+C (or \u2318C) to copy it.");
    }
  });
});
`;

/** GET /assets/app.css and /assets/copy-key.js, cached for an hour. */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  app.get('/assets/app.css', { config: { session: false } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(stylesheet),
  );
  app.get('/assets/copy-key.js', { config: { session: false } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(copyKeyScript),
  );
}
