import type { TestProject } from 'vitest/node';
import {
  createTestPki,
  identityProviderFacts,
  startStack,
  startTestDnsServer,
  type IdentityProviderFacts,
  type Stack,
  type TestDnsServer,
} from '@tws/devstack';
import { testServiceEnv, webhookServiceEnv, webhookTestSettings } from './test-env.js';

let stack: Stack | undefined;
let dns: TestDnsServer | undefined;

/** One real stack (Postgres, Kafka, MinIO, four services) for the whole test run. */
export async function setup(project: TestProject): Promise<void> {
  // Webhook receivers: a throw-away CA, and a loopback DNS server the webhooks service resolves with.
  const pki = await createTestPki(webhookTestSettings.domain);
  dns = await startTestDnsServer({ domain: webhookTestSettings.domain, defaultAddress: webhookTestSettings.receiverAddress });
  const webhookEnv = webhookServiceEnv({ dnsServer: dns.address, caFile: pki.caFile });
  stack = await startStack({ label: 'test', extraEnv: { ...testServiceEnv, ...webhookEnv } });
  const grpcTargetOf = (name: string): string =>
    `127.0.0.1:${stack?.services.instances.find((instance) => instance.name === name)?.grpcPort}`;
  project.provide('stack', {
    gatewayUrl: stack.services.gatewayUrl,
    webUrl: stack.services.webUrl ?? '',
    databaseUrl: stack.infra.databaseUrl,
    kafkaBrokers: stack.infra.kafkaBrokers,
    s3: stack.infra.s3,
    services: stack.services.instances.map((instance) => ({
      name: instance.name,
      opsUrl: instance.opsUrl,
      grpcPort: instance.grpcPort ?? 0,
    })),
    logDir: stack.logDir,
    tasksGrpcTarget: grpcTargetOf('tasks'),
    devJwtPrivateKeyFile: stack.devJwt.privateKeyFile,
    devJwtPublicKeyPem: stack.devJwt.publicKeyPem,
    idp: identityProviderFacts(stack.idp),
    webhooks: {
      ...webhookTestSettings,
      grpcTarget: grpcTargetOf('webhooks'),
      dnsServer: dns.address,
      dnsControlUrl: dns.controlUrl,
      caFile: pki.caFile,
      serverCertPem: pki.serverCertPem,
      serverKeyPem: pki.serverKeyPem,
      serviceEnv: webhookEnv as Record<string, string>,
    },
  });
}

export async function teardown(): Promise<void> {
  await stack?.stop();
  await dns?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: {
      gatewayUrl: string;
      /** The people-facing app (services/web), signing in through `idp`. */
      webUrl: string;
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
      /**
       * The local OpenID Connect provider: issuer, the app's client (`task-workspace-web`, its
       * secret and registered redirect URIs) and the owner, member and guest with their passwords.
       * A test that needs its own redirect URI starts its own with `startIdentityProvider`.
       */
      idp: IdentityProviderFacts;
      /** Webhook test set-up (see test-env.ts `webhookTestSettings`). */
      webhooks: {
        domain: string;
        receiverAddress: string;
        rebindAddress: string;
        retryDelays: string;
        retryDelayMs: number;
        /** The webhooks service's gRPC address in this stack. */
        grpcTarget: string;
        /** `127.0.0.1:port` of the test DNS server. */
        dnsServer: string;
        /** Control endpoint of the test DNS server (see webhooks/dns-server.ts `setDnsRecord`). */
        dnsControlUrl: string;
        caFile: string;
        serverCertPem: string;
        serverKeyPem: string;
        /** The webhooks service's test environment (for suites that start their own stack). */
        serviceEnv: Record<string, string>;
      };
    };
  }
}
