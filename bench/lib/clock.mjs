// Timestamps other processes take on the wall clock (the Go receiver's time.Now, a Kafka record's
// CreateTime), on this process's performance.now() scale, to compare with what it measured itself
// (a PATCH's acknowledgement).
//
// Converted with how far apart the two clocks are when the timestamp reaches this process, not when
// it started (performance.timeOrigin): on the bench machine CLOCK_REALTIME ran ~5 ms a second ahead
// of CLOCK_MONOTONIC (bench/HISTORY.md session 30), so an offset taken at the start added the drift
// since then to every latency: ~0.75 s to each delivery of a sustained run 150 s into a full bench.
// Converted as it arrives, a timestamp is off by the drift over its way here (a receiver line: well
// under a millisecond; a record the tap fetches up to ~0.5 s late: ~2.5 ms) plus Date.now()'s 1 ms.
import { performance } from 'node:perf_hooks';

/** `wallMs` (milliseconds since the epoch, as Date.now() reads them) on the performance.now() scale. */
export const wallToMonotonicMs = (wallMs) => wallMs - (Date.now() - performance.now());
