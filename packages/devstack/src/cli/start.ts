import { DevstackError, progress } from '../progress.js';
import { runningProcesses } from '../processes.js';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { adminCliEnv, adminCliPath } from '../admin-cli.js';
import { devUsers } from '../identity-provider.js';
import { localStack, type LocalStackState } from '../local-stack.js';
import { startStack } from '../stack.js';
import { runCommand } from '../processes.js';
import { nodeFlags } from '../services.js';
import { defaultRestartPolicy } from '../supervisor.js';

interface DemoWorkspace {
  workspace: { id: string; name: string };
  apiKey: { key: string };
}

/**
 * A fresh pro workspace with an API key, made through the operators' admin CLI, whose owner,
 * member and guest are the identity provider's users (same emails).
 */
async function createDemoWorkspace(state: LocalStackState): Promise<DemoWorkspace> {
  const admin = (args: string[], what: string): Promise<string> =>
    runCommand(process.execPath, [...nodeFlags, adminCliPath, ...args], { what, env: { ...process.env, ...adminCliEnv(state) } });
  const [owner, ...others] = devUsers;
  const output = await admin(
    ['workspace', 'create', '--name', 'Demo Workspace', '--plan', 'pro', '--owner-name', owner!.name, '--owner-email', owner!.email],
    'creating the demo workspace',
  );
  const demo = JSON.parse(output) as DemoWorkspace;
  for (const user of others) {
    await admin(
      ['member', 'add', '--workspace', demo.workspace.id, '--email', user.email, '--name', user.name, '--role', user.role],
      `adding ${user.email} (${user.role}) to the demo workspace`,
    );
  }
  return demo;
}

/** `npm start`: the whole stack on loopback until Ctrl-C or SIGTERM, then nothing left running. */
async function main(): Promise<void> {
  const gatewayPort = Number(process.env.PORT ?? 8080);
  // Like Kubernetes, a service that crashes is started again (same ports), with growing delays.
  // The identity provider's port: IDP_PORT, else a free one (the issuer URL is printed below).
  const idpPort = process.env.IDP_PORT ? Number(process.env.IDP_PORT) : undefined;
  if (idpPort !== undefined && !(Number.isInteger(idpPort) && idpPort > 0 && idpPort < 65_536)) {
    throw new DevstackError(`IDP_PORT must be a port number (1-65535), got ${JSON.stringify(process.env.IDP_PORT)}`);
  }
  // The app's port: WEB_PORT, else 8090 (its sign-in callback is registered with the provider).
  const webPort = Number(process.env.WEB_PORT ?? 8090);
  if (!(Number.isInteger(webPort) && webPort > 0 && webPort < 65_536)) {
    throw new DevstackError(`WEB_PORT must be a port number (1-65535), got ${JSON.stringify(process.env.WEB_PORT)}`);
  }
  const stack = await startStack({
    label: 'start',
    gatewayPort,
    webPort,
    restart: { ...defaultRestartPolicy, log: progress },
    ...(idpPort ? { idp: { port: idpPort } } : {}),
  });
  const tasks = stack.services.instances.find((instance) => instance.name === 'tasks');
  const state: LocalStackState = {
    gatewayUrl: stack.services.gatewayUrl,
    tasksGrpcTarget: `127.0.0.1:${tasks?.grpcPort}`,
    devJwtPrivateKeyFile: stack.devJwt.privateKeyFile,
  };
  mkdirSync(path.dirname(localStack.stateFile), { recursive: true });
  writeFileSync(localStack.stateFile, JSON.stringify(state, null, 2));
  const demo = await createDemoWorkspace(state);
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    progress(`${signal} received, stopping everything…`);
    rmSync(localStack.stateFile, { force: true });
    await stack.stop();
    progress('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const lines = [
    '',
    `Task Workspace Service is running.`,
    `  API gateway:   ${stack.services.gatewayUrl}   (try: curl ${stack.services.gatewayUrl}/healthz)`,
    ...(stack.services.webUrl ? [`  App (people): ${stack.services.webUrl}   (sign in with a user below)`] : []),
    ...stack.services.instances
      .filter((instance) => instance.name !== 'gateway')
      .map((instance) => `  ${instance.name.padEnd(13)}  ${instance.opsUrl}/readyz${instance.grpcPort ? `   gRPC 127.0.0.1:${instance.grpcPort}` : ''}`),
    `  Logs:          ${stack.logDir}`,
    '',
    `Demo workspace "${demo.workspace.name}" (pro plan), id ${demo.workspace.id}`,
    `  API key:       ${demo.apiKey.key}`,
    '',
    'Try it:',
    `  curl -s -H 'X-API-Key: ${demo.apiKey.key}' ${stack.services.gatewayUrl}/v1/workspace`,
    `  curl -s -X POST -H 'X-API-Key: ${demo.apiKey.key}' -H 'Content-Type: application/json' \\`,
    `       -d '{"name":"Launch"}' ${stack.services.gatewayUrl}/v1/projects`,
    `  API docs:      ${stack.services.gatewayUrl}/docs`,
    '  Admin CLI:     npm run --silent admin -- help',
    '',
    `Sign in (local OpenID Connect provider, users and passwords new each run):`,
    `  Issuer:        ${stack.idp.issuer}   (discovery: ${stack.idp.issuer}/.well-known/openid-configuration)`,
    `  Client:        ${stack.idp.client.clientId}   secret ${stack.idp.client.clientSecret}   (${stack.idp.client.tokenEndpointAuthMethod})`,
    ...stack.idp.users.map((user) => `  ${user.role.padEnd(13)}  ${user.email.padEnd(20)}  password ${user.password}   (${user.name})`),
    '',
    'Press Ctrl-C to stop.',
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

main().catch(async (error: unknown) => {
  process.stderr.write(`\n[devstack] start failed: ${error instanceof DevstackError ? error.message : String(error)}\n`);
  await Promise.all(runningProcesses().map((managed) => managed.stop()));
  process.exit(1);
});
