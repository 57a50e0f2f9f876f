/**
 * How long the gateway's coalescing loaders (TaskReader, TaskWriter) keep a batch open: two rounds of
 * the event loop's I/O. Under load the requests of one round are about half the connections (those
 * answered by the last call come back together), so a batch open for one round carried ~25 GETs at
 * 50 connections and one open for two ~43: a third fewer GetTasks calls, whose fixed cost (a gRPC
 * call in both services and a query) is most of what a GET costs the tasks service. Measured
 * (bench/HISTORY.md session 30): the bench's GET row, traced, three runs of each alternating, +8 %
 * GETs a second, −22 % tasks-service CPU and ~−7 % gateway CPU a GET; PATCHes at 50 connections on
 * one gateway switched between the two, +4–5 % a second, −5–10 % gateway and −6–9 % tasks-service CPU
 * a PATCH; p99 no worse in either. A third round added nothing. A lone request waits one more pass
 * of the loop with nothing to do: microseconds.
 */
export const batchRounds = 2;

/** DataLoader's `batchScheduleFn`: dispatches once `rounds` rounds of I/O (setImmediate) have passed. */
export function afterIoRounds(rounds: number): (dispatch: () => void) => void {
  return (dispatch) => {
    let left = rounds;
    const next = (): void => {
      left -= 1;
      if (left > 0) setImmediate(next);
      else dispatch();
    };
    setImmediate(next);
  };
}
