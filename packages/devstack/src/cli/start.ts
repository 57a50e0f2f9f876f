import { DevstackError, progress } from '../progress.js';
import { runningProcesses } from '../processes.js';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { adminCliEnv, adminCliPath } from '../admin-cli.js';
import { localStack, type LocalStackState } from '../local-stack.js';
import { startStack } from '../stack.js';
import { runCommand } from '../processes.js';
import { nodeFlags } from '../services.js';
import { defaultRestartPolicy } from '../supervisor.js';

interface DemoWorkspace {
  workspace: { id: string; name: string };
  apiKey: { key: string };
}

/** A fresh pro workspace with an API key, made through the operators' admin CLI. */
async function createDemoWorkspace(state: LocalStackState): Promise<DemoWorkspace> {
  const output = await runCommand(
    process.execPath,
    [...nodeFlags, adminCliPath, 'workspace', 'create', '--name', 'Demo Workspace', '--plan', 'pro'],
    { what: 'creating the demo workspace', env: { ...process.env, ...adminCliEnv(state) } },
  );
  return JSON.parse(output) as DemoWorkspace;
}

/** `npm start`: the whole stack on loopback until Ctrl-C or SIGTERM, then nothing left running. */
async function main(): Promise<void> {
  const gatewayPort = Number(process.env.PORT ?? 8080);
  // Like Kubernetes, a service that crashes is started again (same ports), with growing delays.
  const stack = await startStack({ label: 'start', gatewayPort, restart: { ...defaultRestartPolicy, log: progress } });
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
    ...stack.services.instances
      .filter((instance) => instance.name !== 'gateway')
      .map((instance) => `  ${instance.name.padEnd(13)}  ${instance.opsUrl}/readyz   gRPC 127.0.0.1:${instance.grpcPort}`),
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
