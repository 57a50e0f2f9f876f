// POST /v1/tasks: a new task in the writes project, against the ceiling's `POST /echo` (parse and
// serialize the same body).
import { targets } from '../lib/settings.mjs';

export const createTask = ({ gatewayUrl, ceilingUrl, headers, fixture }) => {
  const { postProject } = fixture;
  const body = JSON.stringify({ projectId: postProject.id, listId: postProject.defaultListId, name: 'Bench created task: write the report' });
  return {
    name: 'POST /v1/tasks',
    service: { url: `${gatewayUrl}/v1/tasks`, method: 'POST', headers, body },
    ceiling: { url: `${ceilingUrl}/echo`, method: 'POST', headers: { 'content-type': 'application/json' }, body },
    ratioTarget: targets.writeRatio,
    writes: true,
  };
};
