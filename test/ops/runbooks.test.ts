import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { taskEventsTopic } from '@tws/contracts';
import { Kafka, logLevel } from 'kafkajs';
import { installKafkaRequestQueueFix } from '@tws/common/kafka-request-queue';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkspace } from '../support/admin.js';
import { api } from '../support/api.js';
import { createProject, keyOf } from '../support/fixtures.js';
import { waitForLogLines } from '../support/service-logs.js';
import { registerWebhook, waitForDeliveryLog } from '../support/webhooks/fixtures.js';
import { startReceiver, type TestReceiver } from '../support/webhooks/receiver.js';

// As in the services (createKafka): no 1 ms timer in each open kafkajs connection (kafka-request-queue.ts).
installKafkaRequestQueueFix();

/**
 * docs/runbooks.md tells an operator what to type at 3 a.m.; this test types it. Every command of
 * the runbook that reads logs (`kubectl … logs … | …`) or metrics (`curl -s localhost:PORT/metrics
 * | …`) is followed there by `# →` lines showing what it prints (`…` = any text). Here the kubectl
 * part becomes `cat` of the log files the test stack wrote (devstack: `<logDir>/<service>.log`),
 * the port-forwarded address the service's ops address in this stack, the rest runs as written in
 * bash, and each `# →` line must match a line of the output. Before that, the test makes the stack
 * write what the commands look for: a request with a known id that registers a webhook and creates a
 * task whose delivery is given up, and an invalid record on task-events.v1 (an error line).
 */
const stack = inject('stack');
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const runbook = readFileSync(path.join(repoRoot, 'docs/runbooks.md'), 'utf8');
const services = ['gateway', 'tasks', 'attachments', 'webhooks', 'web'];
/** The ops ports the runbook port-forwards (the chart's defaults), by service. */
const opsPorts: Record<string, string> = { '8080': 'gateway', '9101': 'tasks', '9102': 'attachments', '9103': 'webhooks', '9090': 'web' };

interface RunbookCommand {
  line: number;
  command: string;
  expected: string[];
}

/** Commands inside fenced bash blocks that read logs or metrics, with their `# →` lines. */
function runbookCommands(text: string): RunbookCommand[] {
  const lines = text.split('\n');
  const commands: RunbookCommand[] = [];
  let inBash = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (line.startsWith('```')) {
      inBash = !inBash && line === '```bash';
      continue;
    }
    if (!inBash || !(/^kubectl .* logs /.test(line) || /^curl -s localhost:\d+\/metrics/.test(line))) continue;
    const expected: string[] = [];
    while (lines[index + 1]?.trim().startsWith('# → ')) expected.push(lines[++index]!.trim().slice('# → '.length));
    commands.push({ line: index + 1 - expected.length, command: line, expected });
  }
  return commands;
}

/** The command with its source replaced by this stack's log files or ops address. */
function localCommand(command: string): string {
  const logs = /^kubectl -n \$NS logs (deploy\/\$FULL-([a-z]+)|-l app\.kubernetes\.io\/instance=\$REL)[^|]*\|/.exec(command);
  if (logs) {
    const names = logs[2] ? [logs[2]] : services;
    const files = names.map((name) => path.join(stack.logDir, `${name}.log`)).filter((file) => existsSync(file));
    expect(files.length, `log files for ${logs[1]}`).toBeGreaterThan(0);
    return `cat ${files.map((file) => `'${file}'`).join(' ')} |${command.slice(logs[0].length)}`;
  }
  const metrics = /^curl -s localhost:(\d+)\/metrics/.exec(command);
  if (metrics) {
    const service = opsPorts[metrics[1]!];
    const base = service === 'gateway' ? stack.gatewayUrl : stack.services.find((entry) => entry.name === service)?.opsUrl;
    if (!base) throw new Error(`no ops address for port ${metrics[1]}`);
    return `curl -s ${base}/metrics${command.slice(metrics[0].length)}`;
  }
  throw new Error(`not a log or metrics command: ${command}`);
}

/** `…` matches any text; the rest literally; the whole (trimmed) line. */
const patternOf = (example: string): RegExp =>
  new RegExp(`^${example.trim().split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*?')}$`);

describe('docs/runbooks.md commands against what the stack really writes', () => {
  const requestId = `runbook-${randomUUID()}`;
  let receiver: TestReceiver;

  beforeAll(async () => {
    // A request with a known id: it registers a webhook whose endpoint always fails, then creates a
    // task, whose delivery is given up after the (shortened) retries.
    const workspace = await createWorkspace();
    const key = keyOf(workspace);
    const project = await createProject(key);
    receiver = await startReceiver({ reply: () => 500 });
    const webhook = await registerWebhook(key, { url: `${receiver.origin}/down`, secret: `whsec_${randomBytes(18).toString('base64url')}` });
    const created = await api('POST', '/v1/tasks', {
      credentials: key,
      headers: { 'x-request-id': requestId },
      body: { name: 'runbook', projectId: project.id, listId: project.defaultListId },
    });
    expect(created.status).toBe(201);
    await api('POST', '/v1/webhooks', {
      credentials: key,
      headers: { 'x-request-id': requestId },
      body: { url: `${receiver.origin}/again`, secret: `whsec_${randomBytes(18).toString('base64url')}` },
    });
    // An invalid record on the main topic: the webhooks service skips it and logs an error.
    const kafka = new Kafka({ clientId: 'runbook-test', brokers: stack.kafkaBrokers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: taskEventsTopic, messages: [{ key: `runbook-${randomUUID()}`, value: JSON.stringify({ runbook: 'not a task event' }) }] });
    await producer.disconnect();
    await waitForLogLines('webhooks', (line) => line.msg === 'skipping an invalid task event');
    await waitForDeliveryLog(key, webhook.id, (deliveries) => deliveries.some((delivery) => delivery.status === 'failed'), 60_000);
    await waitForLogLines('webhooks', (line) => line.msg === 'delivery permanently failed' && line.reqId === requestId);
  }, 90_000);

  afterAll(async () => {
    await receiver?.close();
  });

  const commands = runbookCommands(runbook);

  it('the runbook has log commands, and every one shows what it prints', () => {
    expect(commands.filter((entry) => entry.command.startsWith('kubectl')).length).toBeGreaterThanOrEqual(5);
    expect(commands.filter((entry) => entry.expected.length === 0).map((entry) => `line ${entry.line}: ${entry.command}`)).toEqual([]);
    // The numeric pino levels of the old first command never appear in a real log line.
    expect(runbook).not.toMatch(/"level":\(?\d/);
  });

  it.each(commands.map((entry) => [`line ${entry.line}`, entry] as const))('%s prints what the runbook says', (_line, entry) => {
    const result = spawnSync('bash', ['-o', 'pipefail', '-c', localCommand(entry.command)], {
      encoding: 'utf8',
      env: { ...process.env, REQUEST_ID: requestId },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 30_000,
    });
    expect(result.stderr, entry.command).toBe('');
    const output = result.stdout.split('\n').map((line) => line.trim()).filter((line) => line !== '');
    expect(output.length, `${entry.command} printed nothing`).toBeGreaterThan(0);
    for (const example of entry.expected) {
      expect(output.some((line) => patternOf(example).test(line)), `no line like ${example} in:\n${output.slice(0, 20).join('\n')}`).toBe(true);
      // A JSON example: every line printed is an object with the same keys, in the same order.
      if (example.startsWith('{')) {
        const keys = Object.keys(JSON.parse(example.replaceAll('…', '0')) as object);
        for (const line of output) expect(Object.keys(JSON.parse(line) as object), line).toEqual(keys);
      }
    }
  });
});
