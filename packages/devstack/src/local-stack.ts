import path from 'node:path';
import { cacheDir } from './paths.js';

/**
 * Facts about the local development stack (`npm start`) shared by the launcher, which writes them,
 * and the developer's admin command (`npm run admin`, cli/admin.ts), which reads them, so the
 * operators' CLI needs no flags on a developer machine.
 */
export const localStack = {
  cacheDir,
  /** JSON written by `npm start`: { gatewayUrl, tasksGrpcTarget, devJwtPrivateKeyFile }. */
  get stateFile(): string {
    return process.env.TWS_STACK_FILE ?? path.join(this.cacheDir, 'run', 'stack.json');
  },
  /** The development signing key pair (Ed25519, PEM) the local gateway is configured to trust. */
  get devJwtDir(): string {
    return path.join(this.cacheDir, 'dev-jwt');
  },
  devJwtIssuer: 'task-workspace-devstack',
  devJwtAudience: 'task-workspace-api',
  devJwtAlgorithm: 'EdDSA',
} as const;

export interface LocalStackState {
  gatewayUrl: string;
  tasksGrpcTarget: string;
  devJwtPrivateKeyFile: string;
}
