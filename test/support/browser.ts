import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';
import { repoRoot } from '@tws/devstack';

/**
 * The browser test kit: Debian's chromium (installed by scripts/ci/ensure-chromium.sh, no browser
 * download) driven headless by playwright-core. Screenshots are test artefacts in `screenshotDir`.
 */
export const screenshotDir = path.join(repoRoot, 'test-results', 'screenshots');

/** Bounds for every page: one navigation or action waits at most this long. */
export const browserLimits = { actionTimeoutMs: 15_000, navigationTimeoutMs: 20_000, launchTimeoutMs: 30_000 };

let executable: string | undefined;

/** The chromium binary: CHROMIUM_PATH, else the one on PATH, installed first if it is missing. */
export function chromiumExecutable(): string {
  if (executable) return executable;
  const script = path.join(repoRoot, 'scripts', 'ci', 'ensure-chromium.sh');
  execFileSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 });
  executable =
    process.env.CHROMIUM_PATH ||
    execFileSync('bash', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim();
  return executable;
}

/** Headless chromium; `--no-sandbox` when running as root (the sandbox refuses root). */
export async function launchBrowser(): Promise<Browser> {
  const args = ['--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return chromium.launch({ executablePath: chromiumExecutable(), headless: true, args, timeout: browserLimits.launchTimeoutMs });
}

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/**
 * A page in a fresh context (its own cookies, as a new visitor), opened at `url` when given.
 * `width` defaults to a laptop screen; pass 390 for a phone.
 */
export async function openPage(browser: Browser, url?: string, options: { width?: number; height?: number } = {}): Promise<OpenedPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    locale: 'en-GB',
  });
  context.setDefaultTimeout(browserLimits.actionTimeoutMs);
  context.setDefaultNavigationTimeout(browserLimits.navigationTimeoutMs);
  const page = await context.newPage();
  if (url) await page.goto(url);
  return { context, page, close: () => context.close() };
}

/** Saves a full-page PNG as `<screenshotDir>/<name>.png` and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const file = path.join(screenshotDir, `${name.replace(/[^a-z0-9._-]+/gi, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A user of the stack's local OpenID provider (`stack.idp.users`). */
export interface ProviderUser {
  email: string;
  password: string;
}

/**
 * Opens `url` signed out in a fresh context, follows the app's sign-in link to the local provider,
 * signs in as `user` and waits to land back on `url` (the app's return-to).
 */
export async function signedInAt(browser: Browser, url: string, user: ProviderUser, options: { width?: number; height?: number } = {}): Promise<OpenedPage> {
  const opened = await openPage(browser, url, options);
  const { page } = opened;
  await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
  await page.locator('#email').fill(user.email);
  await page.locator('#password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(url);
  return opened;
}

/**
 * Posts a form from the open page as a person's browser does (its CSRF field copied from a form of
 * the page, or `_csrf` in `fields`), and answers the response to the post itself (before any redirect).
 */
export async function postForm(page: Page, action: string, fields: Record<string, string>): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse((candidate) => candidate.request().method() === 'POST' && new URL(candidate.url()).pathname === action),
    // (A string: the test project has no DOM typings.)
    page.evaluate(`(() => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = ${JSON.stringify(action)};
      const fields = { _csrf: document.querySelector('input[name=_csrf]')?.value ?? '', ...${JSON.stringify(fields)} };
      for (const [name, value] of Object.entries(fields)) {
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = name;
        input.value = value;
        form.appendChild(input);
      }
      document.body.appendChild(form);
      form.submit();
    })()`),
  ]);
  return response;
}

/** Whether the page fits its viewport's width (no horizontal scrolling: the phone-width check). */
export const fitsWidth = (page: Page): Promise<boolean> => page.evaluate<boolean>('document.scrollingElement.scrollWidth <= window.innerWidth');
