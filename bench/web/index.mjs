// benchWeb: the app's pages (services/web) as a person signed in as the workspace's owner sees them,
// measured one after the other and at a small concurrency; server time from the app's histogram
// against the 100 ms target of issue #16 §6 ("no page over 100 ms server time on the local stack").
import { log } from '../lib/log.mjs';
import { settings, targets, webPageFilter } from '../lib/settings.mjs';
import { createWebFixture, fixtureSize } from './fixture.mjs';
import { measurePage, pageClient } from './measure.mjs';

/** The pages: name, path, route template (the histogram's `route` label), and the texts each answer must contain. */
function pages({ urlId, taskPath, webhookId }) {
  const settingsPath = `/${urlId}/settings`;
  return [
    { name: 'workspaces', path: '/workspaces', route: '/workspaces', expect: ['Bench web'] },
    { name: 'settings', path: settingsPath, route: '/:urlId/settings', expect: [`${settingsPath}/members`] },
    { name: 'api keys', path: `${settingsPath}/api-keys`, route: '/:urlId/settings/api-keys', expect: [`Bench key ${fixtureSize.apiKeys - 1}`] },
    { name: 'webhooks', path: `${settingsPath}/webhooks`, route: '/:urlId/settings/webhooks', expect: [`web${fixtureSize.webhooks}.bench.test`] },
    { name: 'delivery log', path: `${settingsPath}/webhooks/${webhookId}`, route: '/:urlId/settings/webhooks/:id', expect: ['Older deliveries'] },
    { name: 'labels', path: `${settingsPath}/labels`, route: '/:urlId/settings/labels', expect: [`Bench label ${fixtureSize.labels}`] },
    { name: 'members', path: `${settingsPath}/members`, route: '/:urlId/settings/members', expect: [`bench-person-${fixtureSize.members - 1}@example.com`] },
    { name: 'task page', path: taskPath, route: '/:urlId/task/:ref', expect: [`Bench comment ${fixtureSize.comments}:`, 'bench-notes.txt', `Bench label ${fixtureSize.labels}`, 'Launch plan', 'members, keys, labels'] },
  ].filter((page) => !webPageFilter || webPageFilter.test(page.name));
}

export async function benchWeb(stack, receiver) {
  const fixture = await createWebFixture(stack, receiver);
  const opsUrl = stack.services.instances.find((instance) => instance.name === 'web').opsUrl;
  const get = pageClient(fixture.webUrl, fixture.cookie);
  const rows = [];
  log(`web: ${settings.webRequests} requests per page one after the other, then ${settings.webRequests} at concurrency ${settings.webConcurrency} (after ${settings.webWarmup} to warm up)`);
  for (const page of pages(fixture)) rows.push(...(await measurePage(get, page, opsUrl)));
  return { fixture: fixtureSize, targetMs: targets.webServerP95Ms, rows };
}
