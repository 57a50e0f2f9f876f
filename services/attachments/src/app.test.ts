import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createWorkspace } from '../../../test/support/admin.js';
import { api } from '../../../test/support/api.js';
import { keyOf } from '../../../test/support/fixtures.js';

/*
 * The attachments process of the test stack (main.ts → buildApp) calls the tasks service through a
 * client with @tws/common's metrics interceptor: the calls succeed, and /metrics exposes one
 * grpc_client_handling_seconds series per method and status code, next to the server's own series.
 */

const stack = inject('stack');
const promtool = process.env.PROMTOOL ?? 'promtool';

async function scrape(): Promise<string> {
  const opsUrl = stack.services.find((service) => service.name === 'attachments')?.opsUrl;
  const response = await fetch(`${opsUrl}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The count of calls to tasks.v1.TasksService/<method> that ended with <code>, 0 before the first. */
function clientCalls(exposition: string, method: string, code: string): number {
  const line = exposition
    .split('\n')
    .find(
      (sample) =>
        sample.startsWith('grpc_client_handling_seconds_count{') &&
        sample.includes('grpc_service="tasks.v1.TasksService"') &&
        sample.includes(`grpc_method="${method}"`) &&
        sample.includes(`grpc_code="${code}"`),
    );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('attachments: gRPC client metrics of its calls to the tasks service', () => {
  it('counts GetWorkspace and GetTasks by status code; the exposition passes promtool', async () => {
    const workspace = await createWorkspace();
    const before = await scrape();

    // CreateUpload asks for the workspace's plan (GetWorkspace); a list asks whether the task exists (GetTasks).
    const upload = await api('POST', '/v1/attachments/upload', { credentials: keyOf(workspace), body: { contentType: 'text/plain', size: 5 } });
    expect(upload.status, upload.text).toBe(200);
    const list = await api('GET', `/v1/tasks/${randomUUID()}/attachments`, { credentials: keyOf(workspace) });
    expect(list.status, list.text).toBe(404);

    const after = await scrape();
    expect(clientCalls(after, 'GetWorkspace', 'OK')).toBeGreaterThanOrEqual(clientCalls(before, 'GetWorkspace', 'OK') + 1);
    expect(clientCalls(after, 'GetTasks', 'OK')).toBeGreaterThanOrEqual(clientCalls(before, 'GetTasks', 'OK') + 1);
    // Client and server families side by side, each declared once, every sample with the service label.
    for (const family of ['grpc_client_handling_seconds histogram', 'grpc_server_handling_seconds histogram', 'grpc_server_handled_total counter']) {
      expect(after.split('\n').filter((line) => line === `# TYPE ${family}`)).toHaveLength(1);
    }
    expect(after.split('\n').filter((line) => line.startsWith('grpc_client_') && !line.includes('service="attachments"'))).toEqual([]);

    const check = spawnSync(promtool, ['check', 'metrics'], { input: after, encoding: 'utf8' });
    expect(check.error, 'promtool is not installed: run scripts/ci/ensure-promtool.sh or set PROMTOOL').toBeUndefined();
    expect(`${check.stdout}${check.stderr}`.trim()).toBe('');
    expect(check.status).toBe(0);
  });
});
