import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as dnsPacket from 'dns-packet';

export interface DnsAnswer {
  a?: string[];
  aaaa?: string[];
  /** Seconds; 0 (no caching) unless set. */
  ttl?: number;
}

export interface TestDnsServer {
  /** `127.0.0.1:port` for WEBHOOK_DNS_SERVERS. */
  address: string;
  /** HTTP control endpoint: `PUT /records/<name>` with a DnsAnswer body, `DELETE /records/<name>`. */
  controlUrl: string;
  stop(): Promise<void>;
}

/**
 * A scriptable DNS server on loopback (UDP) for webhook tests. Every name under `domain` answers
 * `defaultAddress` unless a record was set for it through the control endpoint; every other name is
 * NXDOMAIN. TTL 0 by default, so the service under test never caches an answer across a change
 * (the benchmark passes `defaultTtl` to measure with the service's DNS cache on).
 */
export async function startTestDnsServer(options: {
  domain: string;
  defaultAddress: string;
  defaultTtl?: number;
}): Promise<TestDnsServer> {
  const records = new Map<string, DnsAnswer>();
  const suffix = `.${options.domain.toLowerCase()}`;
  const lookup = (name: string): DnsAnswer | undefined => {
    const key = name.toLowerCase().replace(/\.$/, '');
    const set = records.get(key);
    if (set) return set;
    if (key.endsWith(suffix) || key === options.domain) return { a: [options.defaultAddress], ttl: options.defaultTtl ?? 0 };
    return undefined;
  };

  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const answer = lookup(question.name);
    const answers: dnsPacket.Answer[] = [];
    if (answer && question.type === 'A') {
      for (const data of answer.a ?? []) answers.push({ type: 'A', name: question.name, ttl: answer.ttl ?? 0, class: 'IN', data });
    }
    if (answer && question.type === 'AAAA') {
      for (const data of answer.aaaa ?? []) answers.push({ type: 'AAAA', name: question.name, ttl: answer.ttl ?? 0, class: 'IN', data });
    }
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      // QR + RD + RA, rcode NXDOMAIN (3) for unknown names, NOERROR otherwise (NODATA when no record of that type).
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (answer ? 0 : 3),
      questions: [question],
      answers,
    });
    socket.send(response, remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const dnsPort = socket.address().port;

  const control = http.createServer((request, response) => {
    const match = /^\/records\/([^/?]+)$/.exec(request.url ?? '');
    if (!match) {
      response.writeHead(404).end();
      return;
    }
    const name = decodeURIComponent(match[1]!).toLowerCase();
    if (request.method === 'DELETE') {
      records.delete(name);
      response.writeHead(204).end();
      return;
    }
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      records.set(name, JSON.parse(body) as DnsAnswer);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const controlPort = (control.address() as AddressInfo).port;

  return {
    address: `127.0.0.1:${dnsPort}`,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    async stop() {
      await new Promise<void>((resolve) => socket.close(() => resolve()));
      await new Promise<void>((resolve) => control.close(() => resolve()));
    },
  };
}

/** Sets (or with `undefined`, removes) the answer for a name on the test DNS server. */
export async function setDnsRecord(controlUrl: string, name: string, answer: DnsAnswer | undefined): Promise<void> {
  const url = `${controlUrl}/records/${encodeURIComponent(name)}`;
  const response = answer
    ? await fetch(url, { method: 'PUT', body: JSON.stringify(answer) })
    : await fetch(url, { method: 'DELETE' });
  if (!response.ok) throw new Error(`DNS control answered ${response.status}`);
}
