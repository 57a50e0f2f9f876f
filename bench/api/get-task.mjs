// GET /v1/tasks/:id: one task of the 300, against the ceiling's `/single` (the same bytes).
import { targets } from '../lib/settings.mjs';

export const getTask = ({ gatewayUrl, ceilingUrl, headers, fixture }) => ({
  name: 'GET /v1/tasks/:id',
  service: { url: `${gatewayUrl}/v1/tasks/${fixture.taskIds[0]}`, headers },
  ceiling: { url: `${ceilingUrl}/single` },
  ratioTarget: targets.getTaskRatio,
  p99Target: targets.getTaskP99Ms,
});
