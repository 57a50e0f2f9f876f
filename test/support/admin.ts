import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { adminCliEnv, adminCliPath } from '@tws/devstack';

const run = promisify(execFile);

export interface CliResult {
  code: number;
  json: Record<string, unknown>;
  stderr: string;
}

/** Runs the operators' admin CLI (`npm run admin -- …`) against the test stack. */
export async function adminCli(args: string[]): Promise<CliResult> {
  const stack = inject('stack');
  const env = { ...process.env, ...adminCliEnv(stack), LOG_LEVEL: 'silent' };
  try {
    const { stdout, stderr } = await run(process.execPath, [adminCliPath, ...args], { env });
    return { code: 0, json: JSON.parse(stdout) as Record<string, unknown>, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, json: JSON.parse(failed.stdout || '{}') as Record<string, unknown>, stderr: failed.stderr ?? '' };
  }
}

export interface TestWorkspace {
  workspace: { id: string; name: string; urlId: string; taskPrefix: string; avatarUrl: string | null };
  owner: { userId: string; name: string; email: string; role: string; avatarUrl: string | null };
  apiKey: { id: string; name: string; key: string };
}

let counter = 0;

/** A fresh workspace with its owner and an API key, made through the admin CLI. */
export async function createWorkspace(options: { plan?: 'free' | 'pro'; name?: string } = {}): Promise<TestWorkspace> {
  counter += 1;
  const name = options.name ?? `Test Workspace ${process.pid}-${counter}`;
  const result = await adminCli(['workspace', 'create', '--name', name, '--plan', options.plan ?? 'free']);
  if (result.code !== 0) throw new Error(`workspace create failed: ${JSON.stringify(result.json)} ${result.stderr}`);
  return result.json as unknown as TestWorkspace;
}

/** A signed development JWT for a user of a workspace. */
export async function issueToken(workspaceId: string, userId: string, scope: string, ttlSeconds?: number): Promise<string> {
  const args = ['token', 'issue', '--workspace', workspaceId, '--user', userId, '--scope', scope];
  if (ttlSeconds !== undefined) args.push('--ttl', String(ttlSeconds));
  const result = await adminCli(args);
  if (result.code !== 0) throw new Error(`token issue failed: ${JSON.stringify(result.json)}`);
  return (result.json as { token: string }).token;
}
