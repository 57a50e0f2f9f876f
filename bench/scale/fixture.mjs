// The API side of each stage's data: a pro workspace (admin CLI) with its API key, projects made
// through the API, and a template task written through the API (its description is what seeded
// tasks copy), so everything the seeding does not write comes from the real code paths.
import { apiClient } from '../lib/api-client.mjs';
import { adminCli } from '../lib/stack.mjs';
import { templateOf } from './seed.mjs';

/** A pro workspace, one project, and one task with a markdown description in its default list. */
export async function scaleWorkspace(stack, db, name) {
  const created = await adminCli(stack, ['workspace', 'create', '--name', name, '--plan', 'pro']);
  const key = created.apiKey.key;
  const client = apiClient(stack.services.gatewayUrl, key, 16);
  const project = await newProject(client, `${name} project`);
  const task = (await client.call('POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: `${name} template task` })).json;
  await client.call('PATCH', `/v1/tasks/${task.id}`, { description: '## Notes\n- **why** it matters\n- *when*: this week' });
  const template = await templateOf(db, task.id);
  const { rows } = await db.query('SELECT user_id FROM members WHERE workspace_id = $1 LIMIT 1', [template.workspaceId]);
  return { key, client, project, task, template, workspaceId: template.workspaceId, ownerId: rows[0]?.user_id ?? null };
}

export const newProject = async (client, name) => (await client.call('POST', '/v1/projects', { name })).json;
