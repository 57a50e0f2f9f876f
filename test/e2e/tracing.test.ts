import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { adminCliPath, startStack, type Stack } from '@tws/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestWorkspace } from '../support/admin.js';
import { parseOpenMetrics, prometheusScrapeAccept, promtoolCheckMetrics, promtoolParseOpenMetrics } from '../support/openmetrics.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { testServiceEnv } from '../support/test-env.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';

const SERVER = 2;
const PRODUCER = 4;
const CONSUMER = 5;
const CLIENT = 3;

/** Polls `probe` until it returns a value; fails after `timeoutMs` with `what()`. */
async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number, what: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Traces of one task change, end to end, on a stack of its own whose services export to an OTLP/HTTP
 * receiver this test runs (the shared stack runs with tracing off). The client starts the trace
 * (a sampled `traceparent`): the gateway's HTTP span, the tasks service's gRPC span and Postgres
 * statements, the outbox relay's Kafka record, the webhooks consumer and the delivery attempt to a
 * real HTTPS receiver all carry its trace id, each span the child of the one before.
 */
describe('OpenTelemetry traces across the whole path (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  const { webhooks } = inject('stack');
  let otlp: OtlpReceiver;
  let stack: Stack;
  let hooks: TestReceiver;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    stack = await startStack({
      label: 'tracing',
      extraEnv: {
        ...testServiceEnv,
        ...webhooks.serviceEnv,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        // New traces (probes, the relay's own statements…) are not sampled: only the test's.
        OTEL_TRACES_SAMPLER_ARG: '0',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
    });
    hooks = await startReceiver();
  }, 300_000);

  afterAll(async () => {
    await hooks?.close();
    await stack?.stop();
    await otlp?.close();
  }, 120_000);

  async function cli(args: string[]): Promise<Record<string, unknown>> {
    const tasks = stack.services.instances.find((instance) => instance.name === 'tasks')!;
    const { stdout } = await promisify(execFile)(process.execPath, [adminCliPath, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', TASKS_GRPC_TARGET: `127.0.0.1:${tasks.grpcPort}`, DEV_JWT_PRIVATE_KEY_FILE: stack.devJwt.privateKeyFile },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  async function call<T>(apiKey: string, method: string, urlPath: string, body: unknown, status: number, headers: Record<string, string> = {}): Promise<T> {
    const response = await fetch(`${stack.services.gatewayUrl}${urlPath}`, {
      method,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, `${method} ${urlPath}: ${text}`).toBe(status);
    return JSON.parse(text) as T;
  }

  const spansOf = (traceId: string): ReceivedSpan[] => otlp.spans.filter((span) => span.traceId === traceId);
  const newTraceparent = (): { traceId: string; traceparent: string } => {
    const traceId = randomBytes(16).toString('hex');
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  };

  it('one trace id joins the HTTP request, the gRPC call, Postgres, the Kafka record and the delivery attempt; logs carry it', async () => {
    const created = (await cli(['workspace', 'create', '--name', 'Traced', '--plan', 'pro'])) as unknown as TestWorkspace;
    const apiKey = created.apiKey.key;
    const secret = `whsec_${randomBytes(18).toString('base64url')}`;
    // Two endpoints: the event's one CONSUMER span is the parent of both attempts.
    await call(apiKey, 'POST', '/v1/webhooks', { url: `${hooks.origin}/traced`, secret }, 201);
    await call(apiKey, 'POST', '/v1/webhooks', { url: `${hooks.origin}/traced-too`, secret }, 201);
    const project = await call<{ id: string; defaultListId: string }>(apiKey, 'POST', '/v1/projects', { name: 'Traced' }, 201);

    const { traceId, traceparent } = newTraceparent();
    await call(apiKey, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: 'Follow me' }, 201, { traceparent });
    const [delivered, deliveredToo] = await hooks.waitFor(2, 30_000);
    expect(delivered!.headers['x-service-event']).toBe('task.created');
    expect(deliveredToo!.headers['x-service-delivery']).toBe(delivered!.headers['x-service-delivery']);

    const inTrace = (): ReceivedSpan[] => spansOf(traceId);
    const find = (spans: ReceivedSpan[], service: string, test: (span: ReceivedSpan) => boolean) =>
      spans.find((span) => span.service === service && test(span));
    const chain = await eventually(
      () => {
        const spans = inTrace();
        const http = find(spans, 'tws-gateway', (span) => span.kind === SERVER && span.attributes['http.route'] === '/v1/tasks');
        const grpc = find(spans, 'tws-tasks', (span) => span.kind === SERVER && span.attributes['rpc.system'] === 'grpc');
        const sql = find(spans, 'tws-tasks', (span) => span.attributes['db.system'] === 'postgresql' || span.attributes['db.system.name'] === 'postgresql');
        const publish = find(spans, 'tws-tasks', (span) => span.kind === PRODUCER && span.name === 'task-events.v1 publish');
        const consume = find(spans, 'tws-webhooks', (span) => span.kind === CONSUMER && span.name === 'task-events.v1 process');
        const attempts = spans.filter((span) => span.service === 'tws-webhooks' && span.kind === CLIENT && span.name === 'webhook delivery attempt');
        const attempt = attempts[0];
        return http && grpc && sql && publish && consume && attempt && attempts.length === 2 ? { spans, http, grpc, sql, publish, consume, attempt, attempts } : undefined;
      },
      30_000,
      () => `spans of trace ${traceId}: ${JSON.stringify(inTrace().map((span) => [span.service, span.kind, span.name]))}`,
    );

    // Each hop is the child of the one before it (the gateway's gRPC client span sits between the
    // HTTP span and the tasks service's server span).
    const byId = new Map(chain.spans.map((span) => [span.spanId, span]));
    const ancestors = (span: ReceivedSpan): string[] => {
      const ids: string[] = [];
      for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) ids.push(parent.spanId);
      return ids;
    };
    expect(ancestors(chain.grpc)).toContain(chain.http.spanId);
    expect(ancestors(chain.sql)).toContain(chain.grpc.spanId);
    expect(ancestors(chain.publish)).toContain(chain.grpc.spanId);
    expect(chain.consume.parentSpanId).toBe(chain.publish.spanId);
    // One span for the message, whatever its number of deliveries; every attempt is its child.
    expect(chain.spans.filter((span) => span.kind === CONSUMER && span.name === 'task-events.v1 process')).toHaveLength(1);
    expect(chain.attempts.map((span) => span.parentSpanId)).toEqual([chain.consume.spanId, chain.consume.spanId]);
    expect(new Set(chain.attempts.map((span) => span.attributes['tws.webhook.endpoint_id'])).size).toBe(2);
    expect(chain.consume.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.destination.name': 'task-events.v1',
      'messaging.message.id': delivered!.headers['x-service-delivery'],
      'tws.webhook.deliveries': 2,
    });
    expect(chain.http.name).toBe('POST /v1/tasks');
    expect(chain.attempt.attributes).toMatchObject({
      'server.address': hooks.host,
      'tws.webhook.attempt': 1,
      'http.response.status_code': 200,
      'tws.webhook.outcome': 'succeeded',
    });
    // Never the secret, the body or the URL's path anywhere in the trace.
    const exported = JSON.stringify(chain.spans);
    expect(exported).not.toContain(secret);
    expect(exported).not.toContain('Follow me');
    expect(exported).not.toContain('/traced');
    expect(otlp.rejected).toBe(0);

    // Correlated logs: lines written while handling the request and the event carry the trace id.
    const logsWith = async (prefix: string): Promise<string[]> => {
      const files = (await readdir(stack.logDir)).filter((file) => file.startsWith(prefix) && file.endsWith('.log'));
      const lines = await Promise.all(files.map(async (file) => (await readFile(path.join(stack.logDir, file), 'utf8')).split('\n')));
      return lines.flat().filter((line) => line.includes(`"traceId":"${traceId}"`));
    };
    const gatewayLines = await eventually(
      async () => {
        const lines = await logsWith('gateway');
        return lines.length > 0 ? lines : undefined;
      },
      10_000,
      () => 'a gateway log line with the trace id',
    );
    expect(gatewayLines.some((line) => line.includes('"spanId":"'))).toBe(true);
    expect((await logsWith('tasks')).length).toBeGreaterThan(0);
  }, 120_000);

  it("the gateway's server span: route, method, status and path, never the query string; probes make none", async () => {
    const created = (await cli(['workspace', 'create', '--name', 'Traced span', '--plan', 'pro'])) as unknown as TestWorkspace;
    const project = await call<{ id: string }>(created.apiKey.key, 'POST', '/v1/projects', { name: 'Span' }, 201);
    // A probe first: had it a span, the gateway would export it before the request's below (spans leave in the order they end).
    const probe = newTraceparent();
    expect((await fetch(`${stack.services.gatewayUrl}/healthz`, { headers: { traceparent: probe.traceparent } })).status).toBe(200);
    const { traceId, traceparent } = newTraceparent();
    const secret = randomBytes(12).toString('hex');
    const response = await fetch(`${stack.services.gatewayUrl}/v1/projects/${project.id}/tasks?limit=1&probe=${secret}`, {
      headers: { authorization: `Bearer ${created.apiKey.key}`, traceparent, 'user-agent': 'tracing-test/1' },
    });
    await response.arrayBuffer();

    const span = await eventually(
      () => spansOf(traceId).find((found) => found.service === 'tws-gateway' && found.kind === SERVER),
      30_000,
      () => `the gateway's server span in trace ${traceId}`,
    );
    expect(span.name).toBe('GET /v1/projects/:projectId/tasks');
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/projects/:projectId/tasks',
      'http.response.status_code': response.status,
      'url.path': `/v1/projects/${project.id}/tasks`,
      'url.scheme': 'http',
      'user_agent.original': 'tracing-test/1',
    });
    expect(JSON.stringify(spansOf(traceId))).not.toContain(secret);
    expect(spansOf(probe.traceId)).toEqual([]);
  }, 120_000);

  it('a retry continues the trace: attempt 2 runs under the retry topic consumer span, a child of the first one', async () => {
    const created = (await cli(['workspace', 'create', '--name', 'Traced retries', '--plan', 'pro'])) as unknown as TestWorkspace;
    const apiKey = created.apiKey.key;
    const flaky = await startReceiver({ reply: (n) => (n === 1 ? 500 : 200) });
    try {
      await call(apiKey, 'POST', '/v1/webhooks', { url: `${flaky.origin}/flaky`, secret: `whsec_${randomBytes(18).toString('base64url')}` }, 201);
      const project = await call<{ id: string; defaultListId: string }>(apiKey, 'POST', '/v1/projects', { name: 'Retried' }, 201);
      const { traceId, traceparent } = newTraceparent();
      await call(apiKey, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: 'Retry me' }, 201, { traceparent });
      await flaky.waitFor(2, 30_000);

      const attempts = await eventually(
        () => {
          const found = spansOf(traceId).filter((span) => span.name === 'webhook delivery attempt');
          return found.length >= 2 ? found : undefined;
        },
        30_000,
        () => `two attempt spans in trace ${traceId}: ${JSON.stringify(spansOf(traceId).map((span) => [span.service, span.kind, span.name]))}`,
      );
      const byId = new Map(spansOf(traceId).map((span) => [span.spanId, span]));
      const first = attempts.find((span) => span.attributes['tws.webhook.attempt'] === 1)!;
      const second = attempts.find((span) => span.attributes['tws.webhook.attempt'] === 2)!;
      expect(first.attributes).toMatchObject({ 'http.response.status_code': 500, 'tws.webhook.outcome': 'failed' });
      expect(second.attributes).toMatchObject({ 'http.response.status_code': 200, 'tws.webhook.outcome': 'succeeded' });
      const retryConsumer = byId.get(second.parentSpanId);
      expect(retryConsumer).toMatchObject({ kind: CONSUMER, name: 'webhooks.retry.5m process' });
      expect(retryConsumer!.parentSpanId).toBe(first.parentSpanId);
      expect(byId.get(first.parentSpanId)).toMatchObject({ kind: CONSUMER, name: 'task-events.v1 process' });
    } finally {
      await flaky.close();
    }
  }, 120_000);
  /**
   * Exemplars (issue #19): the latency histograms of the gateway (HTTP), the tasks service (gRPC
   * server) and the webhooks service (delivery) carry the trace id of a sampled request in
   * OpenMetrics, which /metrics answers when the scrape asks for it the way Prometheus does; without
   * that Accept header it is the Prometheus text format, exemplar-free, that promtool accepts.
   */
  it('the latency buckets carry the trace id the OTLP receiver got as an OpenMetrics exemplar; plain text stays the default', async () => {
    const created = (await cli(['workspace', 'create', '--name', 'Exemplars', '--plan', 'pro'])) as unknown as TestWorkspace;
    const apiKey = created.apiKey.key;
    const receiver = await startReceiver();
    try {
      await call(apiKey, 'POST', '/v1/webhooks', { url: `${receiver.origin}/exemplars`, secret: `whsec_${randomBytes(18).toString('base64url')}` }, 201);
      const project = await call<{ id: string; defaultListId: string }>(apiKey, 'POST', '/v1/projects', { name: 'Exemplars' }, 201);
      const { traceId, traceparent } = newTraceparent();
      await call(apiKey, 'POST', '/v1/tasks', { projectId: project.id, listId: project.defaultListId, name: 'Slow bucket' }, 201, { traceparent });
      await receiver.waitFor(1, 30_000);
      // The trace the exemplars point at is the one the collector got.
      await eventually(
        () => (spansOf(traceId).some((span) => span.service === 'tws-webhooks' && span.name === 'webhook delivery attempt') ? true : undefined),
        30_000,
        () => `the delivery attempt span of trace ${traceId}`,
      );

      const opsUrlOf = (name: string): string => stack.services.instances.find((instance) => instance.name === name)!.opsUrl;
      const expected = [
        { url: stack.services.gatewayUrl, metric: 'http_request_duration_seconds_bucket', labels: { route: '/v1/tasks', method: 'POST', status_code: '201' } },
        { url: opsUrlOf('tasks'), metric: 'grpc_server_handling_seconds_bucket', labels: { grpc_method: 'CreateTask', grpc_code: 'OK' } },
        { url: opsUrlOf('webhooks'), metric: 'webhook_delivery_duration_seconds_bucket', labels: { result: 'succeeded' } },
      ];
      for (const { url, metric, labels } of expected) {
        const response = await fetch(`${url}/metrics`, { headers: { accept: prometheusScrapeAccept } });
        expect(response.headers.get('content-type')).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
        const body = await response.text();
        const parsed = await promtoolParseOpenMetrics(body);
        expect(parsed.ok, `Prometheus' OpenMetrics parser on ${url}/metrics:\n${parsed.output}`).toBe(true);
        const exemplars = parseOpenMetrics(body);
        const ours = exemplars.filter((exemplar) => exemplar.exemplarLabels.trace_id === traceId);
        expect(ours.map((exemplar) => exemplar.metric), `${metric} at ${url}`).toContain(metric);
        expect(ours.find((exemplar) => exemplar.metric === metric)!.labels).toMatchObject(labels);
        // Only sampled traces become exemplars: the stack samples nothing but the test's requests.
        expect(exemplars.every((exemplar) => /^[0-9a-f]{32}$/.test(exemplar.exemplarLabels.trace_id ?? ''))).toBe(true);

        const plain = await fetch(`${url}/metrics`);
        expect(plain.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
        const text = await plain.text();
        expect(text).not.toContain('trace_id');
        expect(text).not.toContain('# EOF');
        const check = await promtoolCheckMetrics(text);
        expect(check, `promtool check metrics on ${url}/metrics:\n${check.output}`).toMatchObject({ code: 0 });
      }
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
