import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cacheDir, repoRoot } from '@tws/devstack';
import { Webhook } from 'standardwebhooks';
import { inject } from 'vitest';

/*
 * The receiver examples of examples/webhook-receivers run as real processes (the way their README
 * says), with the test CA's certificate, on the address the webhooks service may deliver to.
 */

export const exampleLanguages = ['node', 'python', 'go'] as const;
export type ExampleLanguage = (typeof exampleLanguages)[number];

const examplesDir = path.join(repoRoot, 'examples', 'webhook-receivers');

/** One line an example printed on stdout: an accepted event. */
export interface AcceptedEvent {
  id: string;
  event: string;
  createdAt: string;
  data: Record<string, unknown>;
}

export interface RunningExample {
  language: ExampleLanguage;
  /** https://<name>.webhooks.test:<port> */
  origin: string;
  host: string;
  port: number;
  accepted: AcceptedEvent[];
  /** `{rejected, status}` lines of stderr. */
  rejected: Array<{ rejected: string; status: number }>;
  /** Resolves with the first accepted event that matches (rejects after `timeoutMs`). */
  waitForEvent(matches: (event: AcceptedEvent) => boolean, timeoutMs?: number): Promise<AcceptedEvent>;
  /** Resolves once `count` rejections were printed (stderr arrives apart from the HTTP answer). */
  waitForRejections(count: number, timeoutMs?: number): Promise<RunningExample['rejected']>;
  stop(): Promise<void>;
}

function requireTool(command: string, args: string[], missing: string): void {
  const probe = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000 });
  if (probe.error || probe.status !== 0) throw new Error(`${missing} (\`${command} ${args.join(' ')}\` failed: ${probe.error?.message ?? probe.stderr})`);
}

/**
 * The Go example built once per source version into the cache (stdlib only: no module is ever
 * downloaded, GOPROXY=off and GOTOOLCHAIN=local make sure of it).
 */
function goBinary(): string {
  requireTool('go', ['version'], 'Go is needed to run the Go webhook receiver example: install Go 1.22 or newer on PATH');
  const source = path.join(examplesDir, 'go');
  const digest = createHash('sha256');
  for (const file of ['go.mod', 'main.go']) digest.update(readFileSync(path.join(source, file)));
  const binary = path.join(cacheDir, 'webhook-receivers', `go-${digest.digest('hex').slice(0, 16)}`, 'receiver');
  if (existsSync(binary)) return binary;
  mkdirSync(path.dirname(binary), { recursive: true });
  const building = `${binary}.${process.pid}.tmp`;
  const built = spawnSync('go', ['build', '-o', building, '.'], {
    cwd: source,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod' },
  });
  if (built.status !== 0) throw new Error(`go build of the Go receiver example failed: ${built.error?.message ?? built.stderr}`);
  renameSync(building, binary);
  return binary;
}

function commandOf(language: ExampleLanguage): { command: string; args: string[] } {
  switch (language) {
    case 'node':
      return { command: process.execPath, args: [path.join(examplesDir, 'node', 'server.mjs')] };
    case 'python':
      requireTool('python3', ['--version'], 'Python 3 is needed to run the Python webhook receiver example: install python3 (3.8 or newer) on PATH');
      return { command: 'python3', args: [path.join(examplesDir, 'python', 'receiver.py')] };
    case 'go':
      return { command: goBinary(), args: [] };
  }
}

const lines = (child: ChildProcess, stream: 'stdout' | 'stderr', each: (line: string) => void): void => {
  let pending = '';
  child[stream]?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete) if (line.trim()) each(line);
  });
};

/** Starts one example with `secret`, listening on the test receivers' address (a free port). */
export async function startExample(language: ExampleLanguage, secret: string): Promise<RunningExample> {
  const { webhooks } = inject('stack');
  const { command, args } = commandOf(language);
  const tlsDir = mkdtempSync(path.join(tmpdir(), `tws-example-${language}-`));
  writeFileSync(path.join(tlsDir, 'cert.pem'), webhooks.serverCertPem);
  writeFileSync(path.join(tlsDir, 'key.pem'), webhooks.serverKeyPem, { mode: 0o600 });
  const child = spawn(command, args, {
    env: {
      ...process.env,
      WEBHOOK_SECRET: secret,
      TLS_CERT_FILE: path.join(tlsDir, 'cert.pem'),
      TLS_KEY_FILE: path.join(tlsDir, 'key.pem'),
      HOST: webhooks.receiverAddress,
      PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const accepted: AcceptedEvent[] = [];
  const rejected: RunningExample['rejected'] = [];
  const other: string[] = [];
  const wake = new Set<() => void>();
  lines(child, 'stdout', (line) => {
    accepted.push(JSON.parse(line) as AcceptedEvent);
    wake.forEach((check) => check());
  });
  let announced: ((port: number) => void) | undefined;
  lines(child, 'stderr', (line) => {
    const listening = /^listening on .*:(\d+)$/.exec(line);
    if (listening) announced?.(Number(listening[1]));
    else if (line.startsWith('{"rejected"')) {
      rejected.push(JSON.parse(line) as RunningExample['rejected'][number]);
      wake.forEach((check) => check());
    } else other.push(line);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${language} example did not listen within 30 s: ${other.join('\n')}`)), 30_000);
    announced = (value) => {
      clearTimeout(timer);
      resolve(value);
    };
    void exited.then(() => reject(new Error(`${language} example exited (${child.exitCode}): ${other.join('\n')}`)));
  });
  /** Resolves with `found()` once it is defined, checked on every line the example prints. */
  const until = <T>(found: () => T | undefined, timeoutMs: number, missing: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const value = found();
        if (value === undefined) return;
        clearTimeout(timer);
        wake.delete(check);
        resolve(value);
      };
      const timer = setTimeout(() => {
        wake.delete(check);
        reject(new Error(`${language} example: ${missing} in ${timeoutMs} ms; accepted ${JSON.stringify(accepted)}, rejected ${JSON.stringify(rejected)}`));
      }, timeoutMs);
      wake.add(check);
      check();
    });
  const host = `${language}-example-${process.pid}.${webhooks.domain}`;
  return {
    language,
    origin: `https://${host}:${port}`,
    host,
    port,
    accepted,
    rejected,
    waitForEvent(matches, timeoutMs = 30_000) {
      return until(() => accepted.find(matches), timeoutMs, 'no matching accepted event');
    },
    waitForRejections(count, timeoutMs = 10_000) {
      return until(() => (rejected.length >= count ? rejected.slice(0, count) : undefined), timeoutMs, `not ${count} rejections`);
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
      rmSync(tlsDir, { recursive: true, force: true });
    },
  };
}

/** A delivery as the service makes it, signed here (the Standard Webhooks signature by the `standardwebhooks` package). */
export function signedDelivery(secret: string, options: { at?: Date; event?: string } = {}) {
  const id = `evt_${randomUUID()}`;
  const event = options.event ?? 'task.updated';
  const body = Buffer.from(JSON.stringify({ id, event, createdAt: new Date().toISOString(), data: { id: randomUUID(), name: 'Zoë ✓' } }));
  const at = options.at ?? new Date();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Service-Webhook/1.0',
    'x-service-event': event,
    'x-service-delivery': id,
    'x-service-signature': `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).sign(id, at, body),
  };
  return { id, body, headers };
}

/** POSTs `body` with `headers` to the example (trusting the test CA); resolves with the status. */
export function postTo(example: RunningExample, body: Buffer, headers: Record<string, string>): Promise<number> {
  const { webhooks } = inject('stack');
  return new Promise((resolve, reject) => {
    const outgoing = https.request(
      {
        method: 'POST',
        host: webhooks.receiverAddress,
        port: example.port,
        servername: example.host,
        path: '/hooks',
        ca: readFileSync(webhooks.caFile, 'utf8'),
        headers: { ...headers, host: `${example.host}:${example.port}`, 'content-length': String(body.length) },
        agent: false,
        timeout: 15_000,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${example.language} example did not answer in 15 s`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
