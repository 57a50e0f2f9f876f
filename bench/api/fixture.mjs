// What the API rows measure against: a pro workspace, a project of 300 tasks (every third with a
// markdown description) for the reads and PATCHes, an empty project for the POSTs, and the exact
// response bodies the ceiling will answer with.
import { adminCli } from '../lib/stack.mjs';
import { apiClient, inParallel } from '../lib/api-client.mjs';
import { log } from '../lib/log.mjs';
import { settings } from '../lib/settings.mjs';

export async function createApiFixture(stack) {
  log('API: creating a pro workspace');
  const created = await adminCli(stack, ['workspace', 'create', '--name', 'Bench API', '--plan', 'pro']);
  const key = created.apiKey.key;
  const { call } = apiClient(stack.services.gatewayUrl, key);
  const listProject = (await call('POST', '/v1/projects', { name: 'Bench list', description: '300 tasks' })).json;
  const postProject = (await call('POST', '/v1/projects', { name: 'Bench writes' })).json;
  log(`API: creating ${settings.listSize} tasks`);
  const taskIds = await inParallel(settings.listSize, 16, async (i) => {
    const body = { projectId: listProject.id, listId: listProject.defaultListId, name: `Bench task ${i + 1}: write the quarterly report` };
    const id = (await call('POST', '/v1/tasks', body)).json.id;
    // Every third task gets a markdown description (a rich-text node array in responses).
    if (i % 3 === 0) await call('PATCH', `/v1/tasks/${id}`, { description: `## Notes ${i}\n- **why** it matters\n- *when*: this week` });
    return id;
  });
  const single = (await call('GET', `/v1/tasks/${taskIds[0]}`)).text;
  const list = (await call('GET', `/v1/projects/${listProject.id}/tasks`)).text;
  const listLength = JSON.parse(list).length;
  if (listLength !== settings.listSize) throw new Error(`list answered ${listLength} tasks, expected ${settings.listSize}`);
  log(`API: single task ${Buffer.byteLength(single)} bytes, list of ${listLength} tasks ${Buffer.byteLength(list)} bytes`);
  return { key, listProject, postProject, taskIds, single, list, listLength };
}
