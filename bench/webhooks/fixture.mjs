// What the webhook runs change and deliver to: a pro workspace with 200 tasks, and endpoints on the
// receiver (one host each, its own secret) subscribed to task.updated; more can be added later.
import { randomBytes } from 'node:crypto';
import { apiClient, inParallel } from '../lib/api-client.mjs';
import { log } from '../lib/log.mjs';
import { domain } from '../lib/receiver.mjs';
import { settings } from '../lib/settings.mjs';
import { adminCli } from '../lib/stack.mjs';

export async function createWebhookFixture(stack, receiver) {
  log('webhooks: creating a workspace, tasks and endpoints');
  const created = await adminCli(stack, ['workspace', 'create', '--name', 'Bench webhooks', '--plan', 'pro']);
  const { call } = apiClient(stack.services.gatewayUrl, created.apiKey.key, 64);
  const project = (await call('POST', '/v1/projects', { name: 'Bench webhooks' })).json;
  const taskIds = await inParallel(settings.webhookTasks, 16, async (i) =>
    (await call('POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: `Webhook task ${i}` })).json.id,
  );
  const endpointHosts = [];
  /** Registers `count` more endpoints (h1.bench.test, h2.bench.test, …) with the service and the receiver. */
  const registerEndpoints = async (count) => {
    for (let i = 0; i < count; i += 1) {
      const host = `h${endpointHosts.length + 1}.${domain}`;
      const secret = randomBytes(24).toString('base64url');
      await receiver.addSecret(host, secret);
      await call('POST', '/v1/webhooks', { url: `https://${host}:${receiver.port}/hook`, secret, events: ['task.updated'] });
      endpointHosts.push(host);
    }
  };
  await registerEndpoints(settings.webhookEndpoints);
  return { call, taskIds, endpointHosts, registerEndpoints };
}
