export * from './stack.js';
export * from './services.js';
export * from './infra/index.js';
export * from './processes.js';
export * from './progress.js';
export { cacheDir, repoRoot } from './paths.js';
export * from './dev-jwt.js';
export * from './webhook-testkit/pki.js';
export * from './webhook-testkit/dns-server.js';
