import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '@tws/devstack';
import { describe, expect, inject, it } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { createComment, createProject, createSection, createTask, keyOf } from '../support/fixtures.js';
import { registerWebhook, waitForDeliveryLog } from '../support/webhooks/fixtures.js';
import { startReceiver } from '../support/webhooks/receiver.js';

/**
 * Schema fuzzing: schemathesis generates requests from the gateway's /openapi.json (valid and
 * invalid bodies, parameters and headers) with the API key of a pro workspace, and checks every
 * response: no 5xx, a documented status code, a documented content type, and a body matching the
 * documented schema (errors are `{"error": string}`). Bounded: few examples per operation, a time
 * limit, and a request rate under the per-key bucket. Traffic goes to the loopback gateway only
 * (and webhook deliveries to a loopback test receiver). test/fuzz/schemathesis.toml gives the
 * operations with a path id real resources of the workspace, so they get past the 404.
 */
describe('schema fuzzing (schemathesis)', () => {
  it('finds no server error and no response outside the OpenAPI document', async () => {
    const { gatewayUrl } = inject('stack');
    const ws = await createWorkspace({ plan: 'pro' });
    const key = keyOf(ws);
    const project = await createProject(key);
    const section = await createSection(key, project.id);
    const task = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const doomedTask = await createTask(key, { projectId: project.id, listId: project.defaultListId });
    const comment = await createComment(key, task.id);
    const receiver = await startReceiver();
    const secret = `whsec_fuzz_${Date.now()}_0123456789`;
    const webhook = await registerWebhook(key, { url: `${receiver.origin}/`, secret });
    const doomedWebhook = await registerWebhook(key, { url: `${receiver.origin}/other`, secret });
    await createTask(key, { projectId: project.id, listId: project.defaultListId, name: 'For the delivery log' });
    const [delivery] = await waitForDeliveryLog(key, webhook.id, (log) => log.length > 0);
    const started = Date.now();
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn('bash', [path.join(repoRoot, 'scripts/ci/schemathesis.sh')], {
        env: {
          ...process.env,
          SCHEMATHESIS_BASE_URL: gatewayUrl,
          SCHEMATHESIS_API_KEY: ws.apiKey.key,
          SCHEMATHESIS_MAX_EXAMPLES: process.env.SCHEMATHESIS_MAX_EXAMPLES ?? '15',
          SCHEMATHESIS_TIME_LIMIT: process.env.SCHEMATHESIS_TIME_LIMIT ?? '200',
          SCHEMATHESIS_CONFIG: path.join(repoRoot, 'test/fuzz/schemathesis.toml'),
          TWS_FUZZ_PROJECT_ID: project.id,
          TWS_FUZZ_SECTION_ID: section.id,
          TWS_FUZZ_TASK_ID: task.id,
          TWS_FUZZ_DELETE_TASK_ID: doomedTask.id,
          TWS_FUZZ_COMMENT_ID: comment.id,
          TWS_FUZZ_WEBHOOK_ID: webhook.id,
          TWS_FUZZ_DELIVERY_ID: delivery!.id,
          TWS_FUZZ_DELETE_WEBHOOK_ID: doomedWebhook.id,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      child.on('error', reject);
      child.on('close', (exitCode) => resolve({ code: exitCode, output: text }));
    });
    await receiver.close();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    // Schemathesis closes with a pytest-shaped rule (`=== 2 warnings in 41.43s ===`). CI reads such a
    // line as pytest's closing line (a run of no test), so it never reaches our output.
    const isRule = (line: string) => /^=+ .* =+$/u.test(line.trim());
    const lines = output.split('\n');
    // The whole report on failure; its summary (operations, test cases, checks) always.
    if (code !== 0) console.log(lines.filter((line) => !isRule(line)).join('\n'));
    // Phases (one line each) and schemathesis' own closing summary.
    const phases = lines.filter((line) => /^ (✅|❌|🚫|⏭)|^\s+(✅|❌|🚫) \d/u.test(line));
    const summaryAt = lines.findIndex((line) => line.includes(' SUMMARY '));
    const closing = summaryAt >= 0 ? lines.slice(summaryAt + 1) : [];
    const summary = [...phases, ...closing].filter((line) => line.trim() && !isRule(line)).join('\n');
    console.log(`schemathesis: exit ${code} in ${seconds} s\n${summary}`);
    expect(code, 'schemathesis exit status (124 = time limit reached)').toBe(0);
  }, 330_000);
});
