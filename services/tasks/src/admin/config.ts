import { readFileSync } from 'node:fs';
import path from 'node:path';
import { localStack, type LocalStackState } from '@tws/common';

/** Where the admin CLI finds the tasks service and the development signing key. */
export interface CliConfig {
  tasksGrpcTarget: string;
  devJwtPrivateKeyFile: string;
}

function readStackState(file: string): Partial<LocalStackState> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Partial<LocalStackState>) : {};
  } catch {
    return {};
  }
}

const nonEmpty = (value: string | undefined): string | undefined => (value && value.trim() !== '' ? value : undefined);

/**
 * The environment first (`TASKS_GRPC_TARGET`, `DEV_JWT_PRIVATE_KEY_FILE`), then the state file the
 * local stack writes (`npm start`), then the defaults of a developer machine.
 */
export function loadCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  const state = readStackState(localStack.stateFile);
  return {
    tasksGrpcTarget: nonEmpty(env.TASKS_GRPC_TARGET) ?? nonEmpty(state.tasksGrpcTarget) ?? '127.0.0.1:50051',
    devJwtPrivateKeyFile:
      nonEmpty(env.DEV_JWT_PRIVATE_KEY_FILE) ??
      nonEmpty(state.devJwtPrivateKeyFile) ??
      path.join(localStack.devJwtDir, 'private.pem'),
  };
}
