/**
 * OpenTelemetry tracing, loaded before everything else of a service: `node --import
 * <packages/common/dist/tracing.js> services/<name>/dist/main.js` (the images' CMD, the services'
 * start scripts and the dev stack). With no OTLP endpoint configured it imports nothing and returns:
 * no SDK, no hooks, no cost; the OpenTelemetry API the code calls stays a no-op.
 *
 * With an endpoint it registers the ESM loader hook first (so the HTTP instrumentation can patch the
 * modules the service imports after this one), then starts the trace SDK (tracing-sdk.ts): spans of
 * HTTP clients, exported over OTLP and sampled per OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG
 * (default parent-based, 10% of new traces). The other spans are the project's own: the HTTP edges'
 * server spans from their fastify hooks (http-server-span.ts), gRPC calls' (both sides) from the
 * call wrappers (grpc-trace.ts), Postgres statements' from pg-trace.ts (statement text, never
 * values). Kafka records carry the context in their `traceparent` header, set and read by the outbox
 * relay and the webhooks consumer themselves (trace-context.ts).
 */
import { createRequire, register } from 'node:module';
import type pg from 'pg';
import { setTracingShutdown } from './trace-context.js';
import { loadTracingConfig, serviceNameOf, tracingEnabled, type TracingConfig } from './tracing-config.js';

/** What the instrumentations below patch; the only modules the ESM loader hook intercepts. */
const instrumentedModules = ['http', 'https', 'node:http', 'node:https'];

/**
 * The ESM loader hook. In-thread (`module.registerHooks`) where this Node can run it: the
 * `module.register` loader runs on a thread of its own, a second V8 isolate that cost every
 * service ~50 MB of RSS. The off-thread one stays the fallback for an older Node.
 */
async function registerLoaderHook(): Promise<() => Promise<void>> {
  const sync = await import('import-in-the-middle/register-hooks.mjs');
  if (sync.supportsSyncHooks()) {
    sync.register({ include: instrumentedModules });
    return async () => {};
  }
  const { createAddHookMessageChannel } = await import('import-in-the-middle');
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  return waitForAllMessagesAcknowledged;
}

async function startTracing(config: TracingConfig): Promise<void> {
  const waitForAllMessagesAcknowledged = await registerLoaderHook();

  const [{ newTraceRatioOf, samplerOf, spanProcessorOf, startTraceSdk, unsampledParentsDecide }, { HttpInstrumentation }, { instrumentPg }, resources] = await Promise.all([
    import('./tracing-sdk.js'),
    import('@opentelemetry/instrumentation-http'),
    import('./pg-trace.js'),
    import('@opentelemetry/resources'),
  ]);
  const shutdown = startTraceSdk({
    // What sdk-node detects: OTEL_RESOURCE_ATTRIBUTES, host, OS, process and an instance id; then the service's name.
    resource: resources
      .detectResources({
        detectors: [resources.envDetector, resources.hostDetector, resources.osDetector, resources.processDetector, resources.serviceInstanceIdDetector],
      })
      .merge(resources.resourceFromAttributes({ 'service.name': serviceNameOf(config, process.argv[1]) })),
    sampler: samplerOf(config),
    unsampledParentsDecide: unsampledParentsDecide(config),
    newTraceRatio: newTraceRatioOf(config),
    spanProcessors: [await spanProcessorOf(config)],
    instrumentations: [
      // Outgoing requests only (the web app's calls to the OpenID provider). The HTTP edges' SERVER
      // spans come from their fastify hooks (http-server-span.ts): cheaper for unsampled requests,
      // and probes and scrapes (the ops server is plain node:http) are not traced at all.
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true }),
      // No gRPC or pg instrumentation: the project's call wrappers make the gRPC spans
      // (grpc-trace.ts), and pg-trace.ts the statements' spans, in sampled traces only.
      // No undici instrumentation: webhook deliveries have their own attempt span (attempt-span.ts
      // of the webhooks service), without the endpoint URL's path and query.
    ],
  });
  instrumentPg(createRequire(import.meta.url)('pg') as typeof pg);
  setTracingShutdown(shutdown);
  await waitForAllMessagesAcknowledged();
}

let config: TracingConfig;
try {
  config = loadTracingConfig();
} catch (error) {
  // Before the service's logger exists: one JSON line naming the variable, as a service's own
  // configuration check writes it, and exit 1.
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${JSON.stringify({ level: 'fatal', time: new Date().toISOString(), msg: message })}\n`);
  process.exit(1);
}
if (tracingEnabled(config)) await startTracing(config);
