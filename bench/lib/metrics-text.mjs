// Reading a service's /metrics (the Prometheus text exposition) in the bench: the samples of one
// metric with their labels. One parser for every figure the bench takes from a service's own metrics
// (parked deliveries, V8 heap, the web pages' server time, the list streams' reads).

/** Labels of one sample: `a="x",b="y"` → { a: 'x', b: 'y' } (escaped quotes and backslashes undone). */
const labelsOf = (text) =>
  Object.fromEntries([...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1], match[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))]));

/** The samples of `name` (exactly that name, any labels) in an exposition: [{ labels, value }]. */
export function samplesOf(text, name) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^(\w+)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!match || match[1] !== name) continue;
    samples.push({ labels: match[2] ? labelsOf(match[2]) : {}, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of every sample of `name`; 0 when it has none. */
export const sumOf = (text, name) => samplesOf(text, name).reduce((sum, sample) => sum + sample.value, 0);

/** An instance's /metrics text; throws when it does not answer 200 within `timeoutMs`. */
export async function scrapeMetrics(opsUrl, timeoutMs = 10_000) {
  const response = await fetch(`${opsUrl}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`${opsUrl}/metrics answered ${response.status}`);
  return response.text();
}
