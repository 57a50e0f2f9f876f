// A loopback DNS server (UDP) answering `address` for every name under `domain`, NXDOMAIN otherwise
// (same behaviour as test/support/webhooks/dns-server.ts, without the control endpoint).
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';

export async function startDns({ domain, address, ttl = 30 }) {
  const suffix = `.${domain.toLowerCase()}`;
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => {
    let query;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    const known = name.endsWith(suffix) || name === domain;
    const answers = known && question.type === 'A' ? [{ type: 'A', name: question.name, ttl, class: 'IN', data: address }] : [];
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3),
      questions: [question],
      answers,
    });
    socket.send(response, remote.port, remote.address);
  });
  await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    stop: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
