// GET /v1/projects/:id/tasks: the project of 300 tasks (~135 KB of JSON), against the ceiling's `/list`.
import { settings, targets } from '../lib/settings.mjs';

export const listTasks = ({ gatewayUrl, ceilingUrl, headers, fixture }) => ({
  name: `GET /v1/projects/:id/tasks (${settings.listSize})`,
  service: { url: `${gatewayUrl}/v1/projects/${fixture.listProject.id}/tasks`, headers },
  ceiling: { url: `${ceilingUrl}/list` },
  ratioTarget: targets.listRatio,
});
