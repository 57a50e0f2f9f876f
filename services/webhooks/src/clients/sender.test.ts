import type { ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, setDnsRecord, startTestDnsServer, type TestDnsServer, type TestPki } from '@tws/devstack';
import { parseCidrList } from './address-guard.js';
import { HostVetter } from './host-vetting.js';
import { maxKeepAlivePools, WebhookSender } from './sender.js';
import { verifySignature } from '../domain/signing/signature.js';
import { verifyStandard } from '../domain/signing/standard-webhooks.js';

/** The sender and the DNS/SSRF vetting against a real loopback DNS server and HTTPS receivers. */
describe('HostVetter and WebhookSender', () => {
  const domain = 'sender.test';
  const allowed = '127.0.20.1';
  let pki: TestPki;
  let dns: TestDnsServer;
  let vetter: HostVetter;
  let sender: WebhookSender;
  let server: https.Server;
  let port = 0;
  const seen: Array<{ path: string; headers: Record<string, unknown>; body: Buffer; local: string }> = [];
  let behaviour: (path: string, response: ServerResponse) => void = (_path, response) => response.end('ok');

  beforeAll(async () => {
    pki = await createTestPki(domain);
    dns = await startTestDnsServer({ domain, defaultAddress: allowed });
    vetter = new HostVetter({ allowList: parseCidrList(`${allowed}/32`), dnsServers: [dns.address], maxCacheTtlSeconds: 30 });
    sender = new WebhookSender({ vetter, timeoutMs: 1_500, bodyLimitBytes: 1024, connectionsPerTarget: 4, extraCa: pki.caPem });
    server = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks), local: request.socket.localAddress ?? '' });
        behaviour(request.url ?? '', response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, allowed, resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await sender.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await dns.stop();
  });

  const body = Buffer.from('{"id":"evt_1","event":"task.created"}');
  const send = (url: string) => sender.send({ endpointId: 'e1', url, eventType: 'task.created', eventId: 'evt_1', secret: 'k', body });

  it('vets names: allow-listed, blocked, mixed, missing', async () => {
    await setDnsRecord(dns.controlUrl, `mixed.${domain}`, { a: [allowed, '10.0.0.1'] });
    await setDnsRecord(dns.controlUrl, `v6.${domain}`, { aaaa: ['fe80::1'] });
    expect(await vetter.vet(`https://ok.${domain}/`)).toMatchObject({ ok: true, target: { address: allowed, host: `ok.${domain}` } });
    expect(await vetter.vet(`https://mixed.${domain}/`)).toMatchObject({ ok: false, kind: 'blocked' });
    expect(await vetter.vet(`https://v6.${domain}/`)).toMatchObject({ ok: false, kind: 'blocked' });
    expect(await vetter.vet('https://missing.nowhere.test/')).toMatchObject({ ok: false, kind: 'unresolvable', reason: 'host does not resolve' });
    expect(await vetter.vet('http://ok.sender.test/')).toMatchObject({ ok: false, kind: 'invalid' });
  });

  it('posts the signed body with the contract headers to the vetted address, SNI and Host the URL host', async () => {
    behaviour = (_path, response) => response.writeHead(202).end('accepted');
    const result = await send(`https://a.${domain}:${port}/in?x=1`);
    expect(result).toMatchObject({ outcome: 'succeeded', statusCode: 202 });
    const request = seen.at(-1)!;
    expect(request.path).toBe('/in?x=1');
    expect(request.headers).toMatchObject({
      host: `a.${domain}:${port}`,
      'content-type': 'application/json',
      'user-agent': 'Service-Webhook/1.0',
      'x-service-event': 'task.created',
      'x-service-delivery': 'evt_1',
    });
    expect(verifySignature('k', request.body, String(request.headers['x-service-signature']))).toBe(true);
    const stamp = Number(request.headers['webhook-timestamp']);
    expect(request.headers['webhook-id']).toBe('evt_1');
    expect(Math.abs(stamp - Date.now() / 1000)).toBeLessThan(5);
    const standard = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(stamp), 'webhook-signature': String(request.headers['webhook-signature']) };
    expect(verifyStandard('k', request.body, standard)).toBe(true);
    expect(request.body.equals(body)).toBe(true);
  });

  it('keeps at most maxKeepAlivePools endpoints\' connections open, closing the least recently used', async () => {
    behaviour = (_path, response) => response.end('ok');
    const open = new Set<unknown>();
    let connections = 0;
    const opened = (socket: { once: (event: 'close', listener: () => void) => void }): void => {
      connections += 1;
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    };
    server.on('secureConnection', opened);
    try {
      const endpoints = Array.from({ length: maxKeepAlivePools + 30 }, (_, index) => `pool-${index}`);
      for (const endpointId of endpoints) {
        expect(await sender.send({ endpointId, url: `https://p.${domain}:${port}/many`, eventType: 'task.created', eventId: 'evt_1', secret: 'k', body })).toMatchObject({
          outcome: 'succeeded',
        });
      }
      expect(connections).toBe(endpoints.length);
      // The 30 least recently used pools were closed: their connections end.
      for (let waited = 0; open.size > maxKeepAlivePools && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(open.size).toBe(maxKeepAlivePools);
      // The most recently used endpoint's connection is still kept alive: no new connection for it.
      await sender.send({ endpointId: endpoints.at(-1)!, url: `https://p.${domain}:${port}/many`, eventType: 'task.created', eventId: 'evt_1', secret: 'k', body });
      expect(connections).toBe(endpoints.length);
    } finally {
      server.off('secureConnection', opened);
    }
  });

  it('does not follow redirects, and non-2xx fails', async () => {
    behaviour = (_path, response) => response.writeHead(302, { location: `https://a.${domain}:${port}/elsewhere` }).end();
    const before = seen.length;
    expect(await send(`https://a.${domain}:${port}/redirect`)).toMatchObject({ outcome: 'failed', statusCode: 302, error: 'HTTP 302' });
    expect(seen.length).toBe(before + 1);
  });

  it('times out a slow endpoint within the configured total time', async () => {
    behaviour = () => undefined; // never answers
    const result = await send(`https://a.${domain}:${port}/slow`);
    expect(result.outcome).toBe('failed');
    expect(result).toMatchObject({ error: expect.stringContaining('timeout') });
    expect(result.durationMs).toBeGreaterThanOrEqual(1_400);
    expect(result.durationMs).toBeLessThan(3_000);
  });

  it('times out attempts still queued for a connection at the same deadline', async () => {
    behaviour = () => undefined; // never answers: all four connections of the pool stay busy
    const results = await Promise.all(Array.from({ length: 6 }, () => send(`https://queued.${domain}:${port}/slow`)));
    for (const result of results) {
      expect(result).toMatchObject({ outcome: 'failed', error: expect.stringContaining('timeout') });
      expect(result.durationMs).toBeGreaterThanOrEqual(1_400);
      expect(result.durationMs).toBeLessThan(3_000);
    }
    behaviour = (_path, response) => response.end('ok');
    // The pool is usable again once the timed-out requests are gone.
    expect(await send(`https://queued.${domain}:${port}/after`)).toMatchObject({ outcome: 'succeeded', statusCode: 200 });
  });

  it('reads at most the body cap of an endless response', async () => {
    behaviour = (_path, response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(512, 'x');
      const timer = setInterval(() => (response.destroyed ? clearInterval(timer) : response.write(chunk)), 5);
    };
    const result = await send(`https://a.${domain}:${port}/endless`);
    expect(result).toMatchObject({ outcome: 'succeeded', statusCode: 200 });
    expect(result.durationMs).toBeLessThan(1_400);
  });

  it('blocks without a request when the name now resolves to a disallowed address, and fails TLS for an untrusted name', async () => {
    behaviour = (_path, response) => response.end('ok');
    await setDnsRecord(dns.controlUrl, `rebind.${domain}`, { a: ['127.0.20.2'] });
    const before = seen.length;
    const blocked = await send(`https://rebind.${domain}:${port}/`);
    // The delivery log says only that the address is not allowed; the address is for the service log.
    expect(blocked).toMatchObject({ outcome: 'blocked', error: 'url resolves to a disallowed address', detail: expect.stringContaining('127.0.20.2') });
    expect(JSON.stringify({ error: (blocked as { error: string }).error })).not.toContain('127.0.20.2');
    expect(seen.length).toBe(before);
    // The certificate is for *.sender.test: a literal address does not match it.
    expect(await send(`https://${allowed}:${port}/`)).toMatchObject({ outcome: 'failed' });
  });

  it('keeps the address a name resolved to out of a connection error (it goes to the delivery log)', async () => {
    // Nothing listens on port 9 of the allowed address: connect ECONNREFUSED <address>:9.
    const refused = await send(`https://closed.${domain}:9/`);
    expect(refused).toMatchObject({ outcome: 'failed', error: expect.stringContaining('ECONNREFUSED') });
    expect((refused as { error: string }).error).not.toContain(allowed);
  });
});
