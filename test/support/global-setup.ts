import type { TestProject } from 'vitest/node';
import { startStack, type Stack } from '@tws/devstack';
import { testServiceEnv } from './test-env.js';

let stack: Stack | undefined;

/** One real stack (Postgres, Kafka, MinIO, four services) for the whole test run. */
export async function setup(project: TestProject): Promise<void> {
  stack = await startStack({ label: 'test', extraEnv: testServiceEnv });
  project.provide('stack', {
    gatewayUrl: stack.services.gatewayUrl,
    databaseUrl: stack.infra.databaseUrl,
    kafkaBrokers: stack.infra.kafkaBrokers,
    s3: stack.infra.s3,
    services: stack.services.instances.map((instance) => ({
      name: instance.name,
      opsUrl: instance.opsUrl,
      grpcPort: instance.grpcPort ?? 0,
    })),
    logDir: stack.logDir,
    tasksGrpcTarget: `127.0.0.1:${stack.services.instances.find((instance) => instance.name === 'tasks')?.grpcPort}`,
    devJwtPrivateKeyFile: stack.devJwt.privateKeyFile,
    devJwtPublicKeyPem: stack.devJwt.publicKeyPem,
  });
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: {
      gatewayUrl: string;
      databaseUrl: string;
      kafkaBrokers: string[];
      s3: { endpoint: string; accessKey: string; secretKey: string };
      services: Array<{ name: string; opsUrl: string; grpcPort: number }>;
      logDir: string;
      /** Where the admin CLI reaches the tasks service (pass as TASKS_GRPC_TARGET). */
      tasksGrpcTarget: string;
      /** The development signing key the gateway trusts (pass as DEV_JWT_PRIVATE_KEY_FILE). */
      devJwtPrivateKeyFile: string;
      devJwtPublicKeyPem: string;
    };
  }
}
