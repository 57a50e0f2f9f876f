import { describe, expect, inject, it } from 'vitest';

const stack = inject('stack');

describe('services', () => {
  it('the gateway is alive and ready, and reports each backend answering grpc.health.v1', async () => {
    expect(await (await fetch(`${stack.gatewayUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${stack.gatewayUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ok',
      backends: { 'tasks service': 'ok', 'attachments service': 'ok', 'webhooks service': 'ok' },
    });
  });

  it.each(['tasks', 'attachments', 'webhooks'])('%s reports ready with its real dependencies checked', async (name) => {
    const service = stack.services.find((candidate) => candidate.name === name);
    const response = await fetch(`${service?.opsUrl}/readyz`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('ok');
    expect(body.checks.postgres).toBe('ok');
  });

  it.each(['gateway', 'tasks', 'attachments', 'webhooks'])('%s exposes Prometheus metrics with process metrics', async (name) => {
    const base = name === 'gateway' ? stack.gatewayUrl : stack.services.find((s) => s.name === name)?.opsUrl;
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toContain(`process_resident_memory_bytes{service="${name}"}`);
  });

  it('unknown routes answer 404 with the error shape', async () => {
    const response = await fetch(`${stack.gatewayUrl}/v1/nope`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({ error: 'route GET /v1/nope not found' });
  });
});
