// Signing in to the app (services/web) without a browser: the authorization-code flow followed by
// hand with fetch and a small cookie jar, posting the local OpenID provider's login form
// (packages/devstack/src/idp/: GET /interaction/:uid shows it, POST /interaction/:uid/login takes
// `email` and `password`; the first-party consent is granted without a page), until the app's
// callback has set its session cookie.

/** The request path's default cookie path (RFC 6265 5.1.4). */
const defaultPath = (pathname) => (pathname.lastIndexOf('/') > 0 ? pathname.slice(0, pathname.lastIndexOf('/')) : '/');
const pathMatches = (pathname, cookiePath) =>
  pathname === cookiePath || (pathname.startsWith(cookiePath) && (cookiePath.endsWith('/') || pathname[cookiePath.length] === '/'));

/** Cookies by origin (stricter than a browser, which ignores the port: the app and the provider share 127.0.0.1), name and path. */
export function cookieJar() {
  const cookies = new Map();
  return {
    /** Keeps the response's Set-Cookie lines (an expired or emptied cookie is dropped). */
    store(url, response) {
      const { origin, pathname } = new URL(url);
      for (const line of response.headers.getSetCookie()) {
        const [pair, ...attributes] = line.split(';');
        const eq = pair.indexOf('=');
        if (eq <= 0) continue;
        const cookie = { origin, name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), path: defaultPath(pathname) };
        let expired = cookie.value === '';
        for (const attribute of attributes) {
          const [key, value = ''] = attribute.split('=');
          const name = key.trim().toLowerCase();
          if (name === 'path' && value.trim().startsWith('/')) cookie.path = value.trim();
          if (name === 'max-age' && Number(value) <= 0) expired = true;
          if (name === 'expires' && Date.parse(value) <= Date.now()) expired = true;
        }
        const key = `${origin} ${cookie.path} ${cookie.name}`;
        if (expired) cookies.delete(key);
        else cookies.set(key, cookie);
      }
    },
    /** The Cookie header for `url` (empty: none). */
    header(url) {
      const { origin, pathname } = new URL(url);
      return [...cookies.values()]
        .filter((cookie) => cookie.origin === origin && pathMatches(pathname, cookie.path))
        .map((cookie) => `${cookie.name}=${cookie.value}`)
        .join('; ');
    },
    /** A cookie's value at `origin`, or undefined. */
    value(origin, name) {
      return [...cookies.values()].find((cookie) => cookie.origin === origin && cookie.name === name)?.value;
    },
  };
}

/** One request and its redirects (at most 15 hops; a 303 turns a POST into a GET), with the jar. */
export async function follow(jar, url, init = {}) {
  let current = url;
  let options = init;
  for (let hop = 0; hop < 15; hop += 1) {
    const cookie = jar.header(current);
    const response = await fetch(current, {
      ...options,
      redirect: 'manual',
      headers: { ...options.headers, ...(cookie ? { cookie } : {}) },
      signal: AbortSignal.timeout(15_000),
    });
    jar.store(current, response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.arrayBuffer();
      current = new URL(location, current).href;
      options = {};
      continue;
    }
    return { status: response.status, url: current, text: await response.text() };
  }
  throw new Error(`more than 15 redirects from ${url}`);
}

/**
 * Signs `user` ({ email, password } of the provider) in to the app at `webUrl`; the session cookie
 * (`name=value`) and the jar. Fails with what the last page said when the flow does not end signed in.
 */
export async function signIn(webUrl, user) {
  const jar = cookieJar();
  const login = await follow(jar, `${webUrl}/auth/sign-in`);
  const action = /<form method="post" action="([^"]+)"/.exec(login.text)?.[1];
  if (login.status !== 200 || !action) throw new Error(`no login form at ${login.url} (${login.status}): ${login.text.slice(0, 300)}`);
  const done = await follow(jar, new URL(action.replaceAll('&amp;', '&'), login.url).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: user.email, password: user.password }).toString(),
  });
  const session = jar.value(new URL(webUrl).origin, 'tws_session');
  if (done.url !== `${webUrl}/workspaces` || done.status !== 200 || !session) {
    throw new Error(`sign-in ended at ${done.url} (${done.status}) without a session: ${done.text.slice(0, 300)}`);
  }
  return { cookie: `tws_session=${session}`, jar };
}
