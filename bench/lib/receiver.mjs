// The customer's side of the webhooks: a test CA, a DNS server for *.bench.test and the HTTPS
// receiver (`bench/receiver/main.go`) that checks every signature and reports each delivery.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { cacheDir, createTestPki, runCommand, startTestDnsServer } from '@tws/devstack';
import { onCleanup } from './cleanup.mjs';
import { wallToMonotonicMs } from './clock.mjs';
import { log } from './log.mjs';

export const receiverAddress = '127.0.10.1';
export const domain = 'bench.test';

const sourceDir = fileURLToPath(new URL('../receiver', import.meta.url));

/** Builds the receiver (`receiver/main.go`, standard library only) into the cache, once per version of its source. */
async function receiverBinary() {
  const digest = createHash('sha256');
  for (const file of ['go.mod', 'main.go']) digest.update(readFileSync(path.join(sourceDir, file)));
  const binary = path.join(cacheDir, 'bench-receiver', digest.digest('hex').slice(0, 16), 'receiver');
  if (!existsSync(binary)) {
    log('building the webhook receiver (go build, first run only)');
    await runCommand('go', ['build', '-o', binary, '.'], {
      cwd: sourceDir,
      what: 'building bench/receiver with go build (needs go on PATH, as MinIO does)',
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
  }
  return binary;
}

/** Handles the receiver's stdout lines: D(elivery), A(cknowledged secret), L(istening on port). */
function readReceiverLines(child, state, acknowledged, listening) {
  createInterface({ input: child.stdout }).on('line', (line) => {
    const fields = line.split('\t');
    if (fields[0] === 'D') {
      const [, host, deliveryId, receivedAtMicros, name, signatureOk, parsed] = fields;
      state.total += 1;
      if (signatureOk !== '1') state.badSignatures += 1;
      if (parsed !== '1') state.unparsable += 1;
      // On this process's clock, like the PATCH acknowledgements it is compared with (lib/clock.mjs).
      state.onDelivery?.({ host, deliveryId, name, receivedAt: wallToMonotonicMs(Number(receivedAtMicros) / 1000) });
    } else if (fields[0] === 'A') {
      acknowledged.get(fields[1])?.();
    } else if (fields[0] === 'L') {
      listening(Number(fields[1]));
    }
  });
}

/**
 * HTTPS receiver on loopback, a Go process (`receiver/main.go`): it checks each signature and
 * reports (endpoint host, delivery id, task name, time received) to `state.onDelivery`. Kept out of
 * this process so receiving does not wait for the load generator's event loop, and cheap, because
 * in production the receiver is the customer's server and not part of what is measured.
 */
async function startReceiver(pki) {
  const state = { onDelivery: null, total: 0, badSignatures: 0, unparsable: 0 };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tws-bench-receiver-'));
  writeFileSync(path.join(dir, 'cert.pem'), pki.serverCertPem);
  writeFileSync(path.join(dir, 'key.pem'), pki.serverKeyPem, { mode: 0o600 });
  const child = spawn(
    await receiverBinary(),
    ['-address', receiverAddress, '-cert', path.join(dir, 'cert.pem'), '-key', path.join(dir, 'key.pem')],
    // One OS thread for Go code: the receiver shares the 2 cores with the stack it measures, and Go's
    // scheduler spinning across threads cost it 136 µs of CPU a request against 104 µs on one
    // (HISTORY session 17; it keeps up with 2,000 req/s either way).
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, GOMAXPROCS: '1' } },
  );
  const acknowledged = new Map();
  let listening;
  const port = new Promise((resolve, reject) => {
    listening = resolve;
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the receiver exited (${code}) before listening`)));
  });
  readReceiverLines(child, state, acknowledged, listening);
  onCleanup(async () => {
    child.stdin.end();
    await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(5_000)]);
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const addSecret = (host, secret) =>
    new Promise((resolve) => {
      acknowledged.set(host, resolve);
      child.stdin.write(`S\t${host}\t${secret}\n`);
    });
  return { port: await port, state, addSecret, pid: child.pid };
}

/** The test CA, the DNS server (TTL 30 s: the webhooks service's DNS cache on, as in production) and the receiver. */
export async function startReceiverSide() {
  const pki = await createTestPki(domain);
  onCleanup(() => rmSync(path.dirname(pki.caFile), { recursive: true, force: true }));
  const dns = await startTestDnsServer({ domain, defaultAddress: receiverAddress, defaultTtl: 30 });
  onCleanup(() => dns.stop());
  const receiver = await startReceiver(pki);
  log(`receiver https://*.${domain}:${receiver.port} on ${receiverAddress}, DNS ${dns.address}`);
  return { pki, dns, receiver };
}
