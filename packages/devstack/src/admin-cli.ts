import path from 'node:path';
import { localStack } from './local-stack.js';
import { repoRoot } from './paths.js';

/** The operators' CLI as built in this checkout (packages/admin-cli). */
export const adminCliPath = path.join(repoRoot, 'packages', 'admin-cli', 'dist', 'cli.js');

/**
 * The CLI's environment for a stack started here: its tasks service and the development signing
 * key with the issuer and audience that stack's gateway trusts (for `token issue`).
 */
export function adminCliEnv(target: { tasksGrpcTarget: string; devJwtPrivateKeyFile: string }): NodeJS.ProcessEnv {
  return {
    TASKS_GRPC_TARGET: target.tasksGrpcTarget,
    DEV_JWT_PRIVATE_KEY_FILE: target.devJwtPrivateKeyFile,
    DEV_JWT_ISSUER: localStack.devJwtIssuer,
    DEV_JWT_AUDIENCE: localStack.devJwtAudience,
  };
}
