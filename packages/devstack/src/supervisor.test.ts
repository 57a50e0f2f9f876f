import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { freePort, startProcess, waitUntil, type ManagedProcess } from './processes.js';
import { repoRoot } from './paths.js';
import { nodeFlags } from './services.js';
import { supervise, type RestartPolicy, type SupervisedProcess } from './supervisor.js';

/*
 * `npm start` restarts a crashed service like Kubernetes would: real processes, killed for real.
 */

const logDir = mkdtempSync(path.join(os.tmpdir(), 'tws-supervisor-test-'));
const supervised: SupervisedProcess[] = [];

/** A policy with short delays whose log lines the test reads. */
function policy(overrides: Partial<RestartPolicy> = {}): RestartPolicy & { lines: string[] } {
  const lines: string[] = [];
  return { initialDelayMs: 100, maxDelayMs: 400, resetAfterMs: 60_000, log: (line) => lines.push(line), lines, ...overrides };
}

const node = (name: string, script: string) => (): ManagedProcess => startProcess(name, process.execPath, ['-e', script], { logDir });
const idle = 'setInterval(() => {}, 1000)';
const alive = (child: ManagedProcess): boolean => child.child.exitCode === null && child.child.signalCode === null;
const plannedDelays = (lines: string[]): number[] =>
  lines.map((line) => /restarting in (\d+) ms/.exec(line)?.[1]).filter((delay) => delay !== undefined).map(Number);

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  await waitUntil(what, async () => probe(), { timeoutMs, intervalMs: 50 });
}

describe('supervise: restart a process that exits unexpectedly', () => {
  afterEach(async () => {
    await Promise.all(supervised.splice(0).map((entry) => entry.stop(2_000)));
  });
  afterAll(() => rmSync(logDir, { recursive: true, force: true }));

  it('starts a SIGKILLed process again and logs it; a stop is never taken for a crash', async () => {
    const restart = policy();
    const entry = supervise('idle', node('idle', idle), restart);
    supervised.push(entry);
    const first = entry.current;
    const firstPid = first.child.pid;

    await first.kill();
    await until('a new process', () => entry.restarts === 1 && alive(entry.current));
    expect(entry.current.child.pid).not.toBe(firstPid);
    expect(restart.lines[0]).toMatch(/^idle exited unexpectedly \(code 128\) after \d+ ms; restarting in 100 ms; see /);
    expect(restart.lines[1]).toMatch(/^idle restarted \(restart 1, pid \d+\)$/);

    const second = entry.current;
    await entry.stop();
    expect(alive(second)).toBe(false);
    await sleep(500); // longer than any delay of this policy
    expect(entry.restarts).toBe(1);
    expect(entry.current).toBe(second);
  });

  it('doubles the delay after each crash in a row, up to the maximum', async () => {
    const restart = policy();
    const entry = supervise('crashing', node('crashing', 'process.exit(3)'), restart);
    supervised.push(entry);
    await until('five restarts', () => entry.restarts >= 5);
    expect(plannedDelays(restart.lines).slice(0, 5)).toEqual([100, 200, 400, 400, 400]);
    expect(restart.lines[0]).toMatch(/^crashing exited unexpectedly \(code 3\)/);
  });

  it('goes back to the first delay once the process stayed up for resetAfterMs', async () => {
    const restart = policy({ resetAfterMs: 600 });
    const entry = supervise('flaky', node('flaky', idle), restart);
    supervised.push(entry);
    for (let crash = 1; crash <= 2; crash++) {
      await entry.current.kill();
      await until(`restart ${crash}`, () => entry.restarts === crash && alive(entry.current));
    }
    await sleep(900);
    await entry.current.kill();
    await until('restart 3', () => entry.restarts === 3);
    expect(plannedDelays(restart.lines)).toEqual([100, 200, 100]);
  });

  it('cancels a pending restart when stopped during the delay', async () => {
    const restart = policy({ initialDelayMs: 1_000 });
    const entry = supervise('doomed', node('doomed', idle), restart);
    await entry.current.kill();
    await until('the crash is seen', () => restart.lines.length === 1);
    await entry.stop();
    await sleep(1_300);
    expect(entry.restarts).toBe(0);
    expect(restart.lines).toHaveLength(1);
  });
});

describe('supervise: a real service comes back on its ports', () => {
  const stack = inject('stack');
  let entry: SupervisedProcess | undefined;
  afterAll(async () => entry?.stop());

  it('SIGKILLs the attachments service; it is restarted and ready again on the same port', async () => {
    const [opsPort, grpcPort] = [await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      OPS_PORT: String(opsPort),
      GRPC_PORT: String(grpcPort),
      DATABASE_URL: stack.databaseUrl,
      S3_ENDPOINT: stack.s3.endpoint,
      S3_PUBLIC_ENDPOINT: stack.s3.endpoint,
      S3_ACCESS_KEY: stack.s3.accessKey,
      S3_SECRET_KEY: stack.s3.secretKey,
      TASKS_GRPC_TARGET: stack.tasksGrpcTarget,
      SWEEP_INTERVAL_MS: '0',
    };
    const restart = policy({ initialDelayMs: 1_000 });
    const launch = (): ManagedProcess =>
      startProcess('attachments-supervised', process.execPath, [...nodeFlags, path.join(repoRoot, 'services/attachments/dist/main.js')], {
        logDir: stack.logDir,
        env,
      });
    entry = supervise('attachments-supervised', launch, restart);
    const readyz = `http://127.0.0.1:${opsPort}/readyz`;
    const ready = async (): Promise<boolean> => (await fetch(readyz).catch(() => undefined))?.ok === true;
    await until('ready', ready, 60_000);

    await entry.current.kill();
    expect(await ready()).toBe(false);
    await until('ready again after the restart', ready, 60_000);
    expect(entry.restarts).toBe(1);
    expect(restart.lines.join('\n')).toMatch(/attachments-supervised exited unexpectedly \(code 128\).*\n.*attachments-supervised restarted/);
  });
});
