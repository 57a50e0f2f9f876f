// What the receiver saw during one webhook run. Every change renames a task to `<marker> #<seq>`
// (measured) or `<marker> lead-in #<n>` (lead-in); a delivery is matched to its change by that name,
// and its latency is the time from the change's acknowledgement (PATCH answered) to its first arrival
// at that endpoint.

/** The measured changes: acknowledgements, first deliveries per endpoint, latencies (also by second of the run). */
function measuredState(marker, count) {
  return {
    prefix: `${marker} #`,
    ackAt: new Array(count).fill(null),
    firstDelivery: new Map(), // `${host} ${seq}` → receivedAt
    deliveryIds: new Map(), // `${host} ${X-Service-Delivery}` → times received
    latencies: [],
    // By the second (of the run) the change was acknowledged in: where a run was slow, not only how slow.
    latenciesBySecond: [],
    received: 0,
    foreign: 0,
    firstReceivedAt: null,
    lastReceivedAt: null,
    started: Number.POSITIVE_INFINITY, // when the first measured change was sent
  };
}

/** The lead-in changes: counted for loss and latency only. */
const leadInState = (marker, leadIn) => ({
  prefix: `${marker} lead-in #`,
  ackAt: new Array(leadIn).fill(null),
  deliveries: new Set(), // `${host} ${n}`
  received: 0,
  latencies: [],
});

/** The tracker of one run: `onDelivery` goes to the receiver; `measured` and `leadIn` fill in. */
export function trackDeliveries({ marker, count, leadIn }) {
  const measured = measuredState(marker, count);
  const lead = leadInState(marker, leadIn);
  const onLeadIn = (host, name, receivedAt) => {
    const n = Number(name.slice(lead.prefix.length));
    lead.received += 1;
    const id = `${host} ${n}`;
    if (lead.deliveries.has(id)) return;
    lead.deliveries.add(id);
    if (lead.ackAt[n] !== null) lead.latencies.push(receivedAt - lead.ackAt[n]);
  };
  const onMeasured = (host, deliveryId, name, receivedAt) => {
    const m = measured;
    const seq = Number(name.slice(m.prefix.length));
    m.received += 1;
    m.firstReceivedAt ??= receivedAt;
    m.lastReceivedAt = receivedAt;
    // X-Service-Delivery is the event id (the same for every endpoint of the event): count per endpoint.
    const deliveryKey = `${host} ${deliveryId}`;
    m.deliveryIds.set(deliveryKey, (m.deliveryIds.get(deliveryKey) ?? 0) + 1);
    const id = `${host} ${seq}`;
    if (m.firstDelivery.has(id)) return;
    m.firstDelivery.set(id, receivedAt);
    if (m.ackAt[seq] === null) return;
    m.latencies.push(receivedAt - m.ackAt[seq]);
    (m.latenciesBySecond[Math.floor((m.ackAt[seq] - m.started) / 1000)] ??= []).push(receivedAt - m.ackAt[seq]);
  };
  const onDelivery = ({ host, deliveryId, name, receivedAt }) => {
    if (typeof name === 'string' && name.startsWith(lead.prefix)) onLeadIn(host, name, receivedAt);
    else if (typeof name !== 'string' || !name.startsWith(measured.prefix)) measured.foreign += 1;
    else onMeasured(host, deliveryId, name, receivedAt);
  };
  return { measured, leadIn: lead, onDelivery };
}
