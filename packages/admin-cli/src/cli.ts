#!/usr/bin/env node
// The operators' CLI (`tws-admin`; README.md): talks to tasks.v1.AdminService at TASKS_GRPC_TARGET.
// Developers run it as `npm run --silent admin -- <command>` against the local stack.
// Each command prints exactly one JSON object on stdout. Failures print {"error": "..."} and exit
// 2 (usage: unknown command, bad or missing option) or 1 (the operation failed).
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { grpcClientOptions, isGrpcError, unaryApi, type UnaryApi } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import type { AdminServiceClient } from '@tws/proto-types/generated/tasks/v1/AdminService';
import type { Member__Output } from '@tws/proto-types/generated/tasks/v1/Member';
import { importPKCS8, SignJWT } from 'jose';
import { z } from 'zod';
import { defaultTasksGrpcTarget, loadCliConfig, type CliConfig } from './config.js';

class UsageError extends Error {}

const usage = `usage:
  workspace create --name N [--plan free|pro] [--owner-name X] [--owner-email E]
  member add --workspace ID --email E --name N --role owner|member|guest
  apikey create --workspace ID --user USERID --name N
  apikey revoke --workspace ID --id KEYID
  token issue --workspace ID --user USERID --scope "read"|"read write" [--ttl SECONDS]
  before any command: --target HOST:PORT (the tasks gRPC service; default TASKS_GRPC_TARGET, else ${defaultTasksGrpcTarget})`;

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses `--flag value` options strictly and validates them with a zod schema. */
function parseOptions<T extends z.ZodType>(args: string[], options: Options, schema: T): z.infer<T> {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const result = schema.safeParse(values);
  if (!result.success) {
    const issue = result.error.issues[0];
    const option = issue?.path.join('.') ?? '';
    throw new UsageError(option ? `--${option}: ${issue?.message ?? 'invalid'}` : (issue?.message ?? 'invalid options'));
  }
  return result.data;
}

const text = z.string().trim().min(1, 'is required');
const id = z.uuid('must be an id (UUID)');

/** Deadline of each AdminService call. */
const deadlineMs = 10_000;
const adminRpcs = ['CreateWorkspace', 'AddMember', 'CreateApiKey', 'RevokeApiKey'] as const;
type AdminApi = UnaryApi<AdminServiceClient, (typeof adminRpcs)[number]>;

/** The algorithm of the development signing key (Ed25519). */
const tokenAlgorithm = 'EdDSA';

/** A Role as lowercase JSON. */
function roleName(role: Member__Output['role'] | undefined): string {
  const names: Record<string, string> = { ROLE_OWNER: 'owner', ROLE_MEMBER: 'member', ROLE_GUEST: 'guest' };
  return names[String(role)] ?? 'unspecified';
}

const memberJson = (member: Member__Output | null) => ({
  userId: member?.userId ?? '',
  name: member?.name ?? '',
  email: member?.email ?? '',
  role: roleName(member?.role),
  avatarUrl: member?.avatarUrl ?? null,
});

const roleValue = { owner: 'ROLE_OWNER', member: 'ROLE_MEMBER', guest: 'ROLE_GUEST' } as const;

type Command = (args: string[], config: CliConfig) => Promise<object>;

/** Runs `call` with the AdminService API, closing its client afterwards. */
async function withAdmin<T>(config: CliConfig, call: (api: AdminApi) => Promise<T>): Promise<T> {
  const proto = loadTasksProto();
  const client = new proto.tasks.v1.AdminService(
    config.tasksGrpcTarget,
    grpc.credentials.createInsecure(),
    grpcClientOptions('tasks.v1.AdminService'),
  );
  try {
    return await call(unaryApi(client, adminRpcs, deadlineMs));
  } finally {
    client.close();
  }
}

const commands: Record<string, Command> = {
  'workspace create': async (args, config) => {
    const options = parseOptions(
      args,
      { name: { type: 'string' }, plan: { type: 'string' }, 'owner-name': { type: 'string' }, 'owner-email': { type: 'string' } },
      z.object({
        name: text,
        plan: z.enum(['free', 'pro']).default('free'),
        'owner-name': text.default('Owner'),
        'owner-email': z.email('must be an email address').optional(),
      }),
    );
    const response = await withAdmin(config, (api) =>
      api.CreateWorkspace({
        name: options.name,
        plan: options.plan === 'pro' ? 'PLAN_PRO' : 'PLAN_FREE',
        ownerName: options['owner-name'],
        ownerEmail: options['owner-email'] ?? '',
      }),
    );
    const workspace = response.workspace;
    return {
      workspace: {
        id: workspace?.id ?? '',
        name: workspace?.name ?? '',
        urlId: workspace?.urlId ?? '',
        avatarUrl: workspace?.avatarUrl ?? null,
        taskPrefix: workspace?.taskPrefix ?? '',
      },
      owner: memberJson(response.owner),
      apiKey: { id: response.apiKey?.id ?? '', name: response.apiKey?.name ?? '', key: response.apiKey?.key ?? '' },
    };
  },

  'member add': async (args, config) => {
    const options = parseOptions(
      args,
      { workspace: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' } },
      z.object({
        workspace: id,
        email: z.email('must be an email address'),
        name: text,
        role: z.enum(['owner', 'member', 'guest']),
      }),
    );
    const response = await withAdmin(config, (api) =>
      api.AddMember({
        workspaceId: options.workspace,
        email: options.email,
        name: options.name,
        role: roleValue[options.role],
      }),
    );
    return { member: memberJson(response.member) };
  },

  'apikey create': async (args, config) => {
    const options = parseOptions(
      args,
      { workspace: { type: 'string' }, user: { type: 'string' }, name: { type: 'string' } },
      z.object({ workspace: id, user: id, name: text }),
    );
    const response = await withAdmin(config, (api) =>
      api.CreateApiKey({ workspaceId: options.workspace, userId: options.user, name: options.name }),
    );
    return { apiKey: { id: response.apiKey?.id ?? '', name: response.apiKey?.name ?? '', key: response.apiKey?.key ?? '' } };
  },

  'apikey revoke': async (args, config) => {
    const options = parseOptions(
      args,
      { workspace: { type: 'string' }, id: { type: 'string' } },
      z.object({ workspace: id, id }),
    );
    const response = await withAdmin(config, (api) =>
      api.RevokeApiKey({ workspaceId: options.workspace, id: options.id }),
    );
    return { apiKey: { id: response.id, revoked: true } };
  },

  'token issue': async (args, config) => {
    const options = parseOptions(
      args,
      { workspace: { type: 'string' }, user: { type: 'string' }, scope: { type: 'string' }, ttl: { type: 'string' } },
      z.object({
        workspace: text,
        user: text,
        scope: z
          .string()
          .trim()
          .refine((value) => {
            const scopes = value.split(/\s+/);
            return scopes.length > 0 && scopes.every((scope) => scope === 'read' || scope === 'write') && new Set(scopes).size === scopes.length;
          }, 'must be "read", "write" or "read write"'),
        // A non-positive ttl gives an already expired token (useful to test expiry handling).
        ttl: z.coerce.number().int('must be whole seconds').min(-86_400).max(31_536_000).default(3_600),
      }),
    );
    const { privateKeyFile, issuer, audience } = config.token;
    if (!privateKeyFile || !issuer || !audience) {
      throw new UsageError('token issue needs DEV_JWT_PRIVATE_KEY_FILE, DEV_JWT_ISSUER and DEV_JWT_AUDIENCE (npm run admin sets them for the local stack)');
    }
    let pem: string;
    try {
      pem = await readFile(privateKeyFile, 'utf8');
    } catch (error) {
      throw new Error(`cannot read the signing key ${privateKeyFile}: ${(error as Error).message}`, { cause: error });
    }
    const key = await importPKCS8(pem, tokenAlgorithm);
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ scope: options.scope.split(/\s+/).join(' ') })
      .setProtectedHeader({ alg: tokenAlgorithm, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(options.user)
      .setIssuedAt(now)
      .setExpirationTime(now + options.ttl)
      .sign(key);
    return { token };
  },
};

function print(value: object): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function errorMessage(error: unknown, config: CliConfig): string {
  if (isGrpcError(error)) {
    if (error.code === grpc.status.UNAVAILABLE || error.code === grpc.status.DEADLINE_EXCEEDED) {
      return `tasks service unavailable at ${config.tasksGrpcTarget}: ${error.details}`;
    }
    return error.details || error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A leading `--target HOST:PORT` (or `--target=HOST:PORT`) overrides TASKS_GRPC_TARGET. */
function takeTarget(argv: string[]): { target?: string; args: string[] } {
  const [first, second, ...rest] = argv;
  if (first === '--target') {
    if (second === undefined || second.trim() === '') throw new UsageError('--target: is required');
    return { target: second, args: rest };
  }
  if (first?.startsWith('--target=')) {
    const target = first.slice('--target='.length);
    if (target.trim() === '') throw new UsageError('--target: is required');
    return { target, args: argv.slice(1) };
  }
  return { args: argv };
}

async function main(argv: string[]): Promise<number> {
  let config = loadCliConfig();
  let args: string[];
  try {
    const taken = takeTarget(argv);
    if (taken.target !== undefined) config = { ...config, tasksGrpcTarget: taken.target };
    args = taken.args;
  } catch (error) {
    print({ error: `${(error as Error).message}\n${usage}` });
    return 2;
  }
  const [group, action, ...rest] = args;
  if (group === 'help' || group === '--help' || group === '-h') {
    print({ usage: usage.split('\n').slice(1).map((line) => line.trim()) });
    return 0;
  }
  const command = group !== undefined && action !== undefined ? commands[`${group} ${action}`] : undefined;
  if (!command) {
    const given = [group, action].filter((word) => word !== undefined).join(' ');
    print({ error: `${given ? `unknown command "${given}"` : 'no command given'}\n${usage}` });
    return 2;
  }
  try {
    print(await command(rest, config));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      print({ error: error.message });
      return 2;
    }
    print({ error: errorMessage(error, config) });
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
