// PATCH /v1/tasks/:id: renames the 300 tasks in turn (always an effective change, so each one writes
// an event), against the ceiling's `PATCH /echo/:id`. One counter for both, as in a single run.
import { targets } from '../lib/settings.mjs';

export const updateTask = ({ gatewayUrl, ceilingUrl, headers, fixture }) => {
  const { taskIds } = fixture;
  let patchCounter = 0;
  const patchRequest = (prefix) => [
    {
      method: 'PATCH',
      setupRequest: (request) => {
        patchCounter += 1;
        return {
          ...request,
          path: `${prefix}/${taskIds[patchCounter % taskIds.length]}`,
          body: JSON.stringify({ name: `Bench task renamed ${patchCounter}` }),
        };
      },
    },
  ];
  return {
    name: 'PATCH /v1/tasks/:id',
    service: { url: gatewayUrl, headers, requests: patchRequest('/v1/tasks') },
    ceiling: { url: ceilingUrl, headers: { 'content-type': 'application/json' }, requests: patchRequest('/echo') },
    ratioTarget: targets.writeRatio,
    writes: true,
  };
};
