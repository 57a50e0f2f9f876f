import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

interface HealthCheckResponse {
  status: 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN' | number;
}

type HealthClient = grpc.Client & {
  check(
    request: { service: string },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<HealthCheckResponse>,
  ): grpc.ClientUnaryCall;
};

const HealthClientConstructor = grpc.makeClientConstructor(
  healthService as unknown as grpc.ServiceDefinition,
  'grpc.health.v1.Health',
) as unknown as new (target: string, credentials: grpc.ChannelCredentials, options?: grpc.ClientOptions) => HealthClient;

/** A grpc.health.v1 checker for a peer; resolves when it reports SERVING, rejects otherwise. */
export function grpcHealthChecker(target: string, options: grpc.ClientOptions = {}): { check(): Promise<void>; close(): void } {
  const client = new HealthClientConstructor(target, grpc.credentials.createInsecure(), options);
  return {
    check: () =>
      new Promise<void>((resolve, reject) => {
        client.check({ service: '' }, new grpc.Metadata(), { deadline: Date.now() + 1_500 }, (error, response) => {
          if (error) reject(new Error(`${target}: ${error.details || error.message}`));
          else if (response?.status !== 'SERVING' && response?.status !== 1) reject(new Error(`${target}: ${String(response?.status)}`));
          else resolve();
        });
      }),
    close: () => client.close(),
  };
}
