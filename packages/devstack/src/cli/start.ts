import { DevstackError, progress } from '../progress.js';
import { runningProcesses } from '../processes.js';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { localStack, type LocalStackState } from '@tws/common';
import { startStack } from '../stack.js';

/** `npm start`: the whole stack on loopback until Ctrl-C or SIGTERM, then nothing left running. */
async function main(): Promise<void> {
  const gatewayPort = Number(process.env.PORT ?? 8080);
  const stack = await startStack({ label: 'start', gatewayPort });
  const tasks = stack.services.instances.find((instance) => instance.name === 'tasks');
  const state: LocalStackState = {
    gatewayUrl: stack.services.gatewayUrl,
    tasksGrpcTarget: `127.0.0.1:${tasks?.grpcPort}`,
    devJwtPrivateKeyFile: stack.devJwt.privateKeyFile,
  };
  mkdirSync(path.dirname(localStack.stateFile), { recursive: true });
  writeFileSync(localStack.stateFile, JSON.stringify(state, null, 2));
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
  for (const instance of stack.services.instances) {
    void instance.process.exited.then((code) => {
      if (!stopping) progress(`${instance.name} exited unexpectedly (code ${code}); see ${instance.process.logFile}`);
    });
  }
  const lines = [
    '',
    `Task Workspace Service is running.`,
    `  API gateway:   ${stack.services.gatewayUrl}   (try: curl ${stack.services.gatewayUrl}/healthz)`,
    ...stack.services.instances
      .filter((instance) => instance.name !== 'gateway')
      .map((instance) => `  ${instance.name.padEnd(13)}  ${instance.opsUrl}/readyz   gRPC 127.0.0.1:${instance.grpcPort}`),
    `  Logs:          ${stack.logDir}`,
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
