// Server time from the app's own histogram: `http_request_duration_seconds{method,route,status_code}`
// on the web service's ops port (/metrics; plugins/ops.ts observes `reply.elapsedTime`, from the
// request's arrival to the response sent). Read before and after a run: the difference is that run.
// The buckets (@tws/common: 1, 2.5, 5, 10, 25, 50, 100, 250 ms, …) bound what can be known: the
// share at or under 100 ms and the mean are exact, p50/p95 are interpolated inside their bucket
// (as Prometheus' histogram_quantile does) and the max is the upper bound of its bucket.
import { samplesOf, scrapeMetrics } from '../lib/metrics-text.mjs';
import { round } from '../lib/numbers.mjs';

const metric = 'http_request_duration_seconds';

/** The GET histogram of `route` with status 200 now: cumulative bucket counts by bound (seconds), count, sum. */
export async function scrape(opsUrl, route) {
  const text = await scrapeMetrics(opsUrl);
  const histogram = { buckets: new Map(), count: 0, sum: 0 };
  const ofRoute = (name) => samplesOf(text, `${metric}_${name}`).filter(({ labels }) => labels.method === 'GET' && labels.route === route && labels.status_code === '200');
  for (const { labels, value } of ofRoute('bucket')) histogram.buckets.set(labels.le === '+Inf' ? Infinity : Number(labels.le), value);
  for (const { value } of ofRoute('count')) histogram.count = value;
  for (const { value } of ofRoute('sum')) histogram.sum = value;
  return histogram;
}

/** after − before: the requests of one run. */
export function difference(before, after) {
  const bounds = [...after.buckets.keys()].sort((a, b) => a - b);
  return {
    bounds,
    cumulative: bounds.map((bound) => after.buckets.get(bound) - (before.buckets.get(bound) ?? 0)),
    count: after.count - before.count,
    sum: after.sum - before.sum,
  };
}

/** The q-quantile in ms, interpolated linearly inside its bucket; the top finite bound if it lies beyond. */
function quantileMs({ bounds, cumulative, count }, q) {
  const rank = q * count;
  for (let i = 0; i < bounds.length; i += 1) {
    if (cumulative[i] < rank) continue;
    if (bounds[i] === Infinity) return bounds[i - 1] * 1000;
    const lower = i === 0 ? 0 : bounds[i - 1];
    const below = i === 0 ? 0 : cumulative[i - 1];
    const inBucket = cumulative[i] - below;
    return (lower + (bounds[i] - lower) * (inBucket ? (rank - below) / inBucket : 1)) * 1000;
  }
  return null;
}

/** A run's server-time figures (ms), and how many requests took longer than `targetMs` (a bucket bound). */
export function serverFigures(delta, targetMs) {
  if (delta.count <= 0) return { requests: 0, p50Ms: null, p95Ms: null, maxMsAtMost: null, meanMs: null, overTarget: null, p95WithinTarget: false };
  const targetIndex = delta.bounds.findIndex((bound) => Math.abs(bound * 1000 - targetMs) < 1e-9);
  if (targetIndex < 0) throw new Error(`the histogram has no bucket bound at ${targetMs} ms`);
  const withinTarget = delta.cumulative[targetIndex];
  const maxIndex = delta.cumulative.findIndex((value) => value === delta.count);
  return {
    requests: delta.count,
    p50Ms: round(quantileMs(delta, 0.5), 1),
    p95Ms: round(quantileMs(delta, 0.95), 1),
    // The largest request lies in this bucket: at most its bound (Infinity: beyond the largest bound).
    maxMsAtMost: delta.bounds[maxIndex] === Infinity ? null : round(delta.bounds[maxIndex] * 1000, 1),
    meanMs: round((delta.sum / delta.count) * 1000, 2),
    overTarget: delta.count - withinTarget,
    // Exact: the nearest-rank p95 is within the target when ≥ 95 % of the requests are at or under its bound.
    p95WithinTarget: withinTarget >= Math.ceil(0.95 * delta.count),
  };
}
