import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { failedOnTakenPort, reservePort, startProcess, waitUntil } from './processes.js';

/*
 * Parallel test files each start a stack on this machine: a port chosen long before its service
 * binds it (the app's, registered at the identity provider before Kafka starts) is held meanwhile,
 * and a service that loses a port anyway is recognised so it can be started again.
 */

const logDir = mkdtempSync(path.join(os.tmpdir(), 'tws-processes-test-'));
afterAll(() => rmSync(logDir, { recursive: true, force: true }));

/** Listens on the port; resolves with the error code, or 'ok' (and closes) when it could bind. */
function tryListen(port: number): Promise<string> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve('ok')));
  });
}

describe('reservePort', () => {
  it('holds the port until released: nobody else can bind it, then it is free for its service', async () => {
    const reservation = await reservePort();
    expect(reservation.port).toBeGreaterThan(0);
    expect(await tryListen(reservation.port)).toBe('EADDRINUSE');
    await reservation.release();
    await reservation.release(); // a second release is harmless
    expect(await tryListen(reservation.port)).toBe('ok');
  });

  it('gives different ports to reservations held at the same time', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => reservePort()));
    expect(new Set(held.map((reservation) => reservation.port)).size).toBe(20);
    await Promise.all(held.map((reservation) => reservation.release()));
  });
});

describe('failedOnTakenPort', () => {
  const listenOn = (port: number): string =>
    `require('node:net').createServer().listen(${port}, '127.0.0.1').on('error', (e) => { console.log(JSON.stringify({level: 'fatal', msg: e.message})); process.exit(1); })`;

  it('is true for a process that exited because its port was taken', async () => {
    const reservation = await reservePort();
    const child = startProcess('taken', process.execPath, ['-e', listenOn(reservation.port)], { logDir });
    await waitUntil('exit', async () => child.child.exitCode !== null, { timeoutMs: 10_000, intervalMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the log stream flushes
    expect(await failedOnTakenPort(child)).toBe(true);
    await reservation.release();
  });

  it('is false for a process that exited for another reason, and for one still running', async () => {
    const failed = startProcess('other', process.execPath, ['-e', 'console.log("no DATABASE_URL"); process.exit(1)'], { logDir });
    await waitUntil('exit', async () => failed.child.exitCode !== null, { timeoutMs: 10_000, intervalMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await failedOnTakenPort(failed)).toBe(false);

    const reservation = await reservePort();
    await reservation.release();
    const running = startProcess('running', process.execPath, ['-e', listenOn(reservation.port)], { logDir });
    expect(await failedOnTakenPort(running)).toBe(false);
    await running.stop();
  });
});
