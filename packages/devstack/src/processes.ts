import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { DevstackError } from './progress.js';

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** SIGTERM, then SIGKILL after the grace period; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once (fault tests). */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

const running = new Set<ManagedProcess>();
const setpriv = '/usr/bin/setpriv';

// Safety net: if the launcher exits without stopping them (a crash), nothing it started survives it.
process.once('exit', () => {
  for (const managed of running) managed.child.kill('SIGKILL');
});

/** Starts a long-running process whose output goes to a log file. */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions & { logDir: string; stopSignal?: NodeJS.Signals },
): ManagedProcess {
  mkdirSync(options.logDir, { recursive: true });
  const logFile = path.join(options.logDir, `${name}.log`);
  const log = createWriteStream(logFile, { flags: 'a' });
  // Settles when the log file is closed (after the child's pipes closed) or cannot be written: a
  // log that fails (its directory removed, the disk full) is reported, never an uncaught error.
  const logClosed = new Promise<void>((resolve) => {
    log.once('close', resolve);
    log.once('error', (error) => {
      process.stderr.write(`[devstack] ${name}: cannot write its log ${logFile}: ${error.message}\n`);
      resolve();
    });
  });
  // Own process group: Ctrl-C reaches only the launcher, which then stops everything in order.
  // With util-linux's setpriv the kernel also kills the process if the launcher dies without
  // stopping it (SIGKILL, a test runner killed mid-run): no orphaned servers.
  const [file, argv] = existsSync(setpriv) ? [setpriv, ['--pdeathsig', 'KILL', '--', command, ...args]] : [command, args];
  const child = spawn(file, argv, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(managed);
      resolve(code ?? (signal ? 128 : null));
    });
    // Output can still arrive after 'exit' (a killed process's last buffered lines): end the log once the pipes closed.
    child.once('close', () => log.end());
    child.once('error', () => resolve(null));
  });
  /** Its last lines are in the log when stop() returns (bounded: a grandchild may hold the pipes open). */
  const logFlushed = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([logClosed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000)))]);
    clearTimeout(timer);
  };
  const waitOrKill = async (signal: NodeJS.Signals, graceMs: number): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    await logFlushed();
  };
  const managed: ManagedProcess = {
    name,
    child,
    logFile,
    exited,
    stop: (graceMs = 15_000) => waitOrKill(options.stopSignal ?? 'SIGTERM', graceMs),
    kill: () => waitOrKill('SIGKILL', 0),
  };
  running.add(managed);
  return managed;
}

/** Every process started by this launcher that is still running. */
export function runningProcesses(): ManagedProcess[] {
  return [...running];
}

/** Runs a command to completion; rejects naming the command and showing its output tail. */
export function runCommand(
  command: string,
  args: string[],
  options: SpawnOptions & { what: string; echo?: boolean } ,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      if (options.echo) process.stderr.write(chunk);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('error', (error) => reject(new DevstackError(`${options.what}: cannot run ${command}: ${error.message}`)));
    child.once('exit', (code) => {
      if (code === 0) resolve(output);
      else reject(new DevstackError(`${options.what} failed (exit ${code}):\n${output.split('\n').slice(-25).join('\n')}`));
    });
  });
}

/**
 * A loopback port chosen by the kernel and held open (listening) until released: while held, no
 * other process on the machine (a parallel test file's stack, an outgoing connection) can take it.
 * For a port that must be known long before its service binds it (the app's, registered at the
 * identity provider before Kafka has even started).
 */
export interface PortReservation {
  readonly port: number;
  /** Frees the port for its service to bind; safe to call more than once. */
  release(): Promise<void>;
}

export function reservePort(): Promise<PortReservation> {
  return new Promise((resolve, reject) => {
    // unref: a reservation never released does not keep this process alive.
    const server = net.createServer().unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (typeof address !== 'object' || !address) {
        server.close();
        reject(new Error('no port'));
        return;
      }
      let released: Promise<void> | undefined;
      resolve({
        port: address.port,
        release: () => (released ??= new Promise<void>((done) => server.close(() => done()))),
      });
    });
  });
}

/** Asks the kernel for a free loopback port (free now: bind it soon, or hold a `reservePort()`). */
export async function freePort(): Promise<number> {
  const reservation = await reservePort();
  await reservation.release();
  return reservation.port;
}

/** Whether a process that exited said last that it could not bind its port (taken since it was chosen). */
export async function failedOnTakenPort(managed: ManagedProcess): Promise<boolean> {
  if (managed.child.exitCode === null) return false;
  const log = await readFile(managed.logFile, 'utf8').catch(() => '');
  const lastLine = log.trimEnd().split('\n').at(-1) ?? '';
  return lastLine.includes('EADDRINUSE');
}

/** Polls until `probe` succeeds; fails with the component's log path when the process dies or time runs out. */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  options: { timeoutMs: number; process?: ManagedProcess | ManagedProcess[]; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const watched = options.process === undefined ? [] : [options.process].flat();
  for (;;) {
    const exited = watched.find((managed) => managed.child.exitCode !== null);
    if (exited) throw new DevstackError(`${what}: process exited with code ${exited.child.exitCode}; see ${exited.logFile}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      const logs = watched.map((managed) => managed.logFile).join(', ');
      throw new DevstackError(`${what}: not ready after ${options.timeoutMs} ms${logs ? `; see ${logs}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}

export function portAcceptsConnections(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
