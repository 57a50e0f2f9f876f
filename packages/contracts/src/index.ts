export * from './topics.js';
export * from './headers.js';
export * from './task-events.js';
export * from './scheduled-attempts.js';
export * from './webhook-events.js';
