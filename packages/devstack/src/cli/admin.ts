import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { adminCliEnv, adminCliPath } from '../admin-cli.js';
import { localStack, type LocalStackState } from '../local-stack.js';
import { nodeFlags } from '../services.js';

/** The state file `npm start` writes; empty when no local stack is running. */
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
 * `npm run admin -- <command>`: the operators' CLI (packages/admin-cli) against the local stack.
 * The environment first (`TASKS_GRPC_TARGET`, `DEV_JWT_PRIVATE_KEY_FILE`), then the state file of
 * `npm start`, then the defaults of a developer machine; the CLI's output and exit code unchanged.
 */
const state = readStackState(localStack.stateFile);
const env = adminCliEnv({
  tasksGrpcTarget: nonEmpty(process.env.TASKS_GRPC_TARGET) ?? nonEmpty(state.tasksGrpcTarget) ?? '127.0.0.1:50051',
  devJwtPrivateKeyFile:
    nonEmpty(process.env.DEV_JWT_PRIVATE_KEY_FILE) ?? nonEmpty(state.devJwtPrivateKeyFile) ?? path.join(localStack.devJwtDir, 'private.pem'),
});
const child = spawn(process.execPath, [...nodeFlags, adminCliPath, ...process.argv.slice(2)], {
  env: { ...process.env, ...env },
  stdio: 'inherit',
});
// Ctrl-C reaches the CLI too (same process group); SIGTERM is passed on.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
