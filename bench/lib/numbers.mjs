// The two number helpers of every figure: nearest-rank percentiles and rounding that keeps null.

/** The p-th percentile (nearest rank) of an ascending array, or null when it is empty. */
export const percentile = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null;

export const round = (value, digits = 2) => (value === null || value === undefined ? null : Number(value.toFixed(digits)));

/** Sorts `values` in place and returns its p50 and p99 (one decimal). */
export function p50p99(values) {
  values.sort((a, b) => a - b);
  return { p50: round(percentile(values, 50), 1), p99: round(percentile(values, 99), 1) };
}
