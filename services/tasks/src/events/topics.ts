/** Task change events, key = task id, value = the webhook payload of the API contract. */
export const taskEventsTopic = 'task-events.v1';
