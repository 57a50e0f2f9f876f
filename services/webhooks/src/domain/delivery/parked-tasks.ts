/**
 * How long a note is kept at least: far longer than a fan-out statement takes, since a note matters
 * only to deliveries whose fan-out read was sent before it (`DeliveryWork.checkedAt`), and those are
 * decided on as soon as their statement returns.
 */
const keepMs = 60_000;

interface Note {
  /** When the last park committed (ms). */
  at: number;
  /** Parks still committing. */
  pending: number;
}

/**
 * When this replica last parked a delivery of each (endpoint, task): a first attempt whose fan-out
 * read was sent before that park committed did not see it, and must queue behind it too (event
 * order). An endpoint's notes go once the drainer, in a query begun after them, finds the endpoint
 * without a backlog (what they parked was attempted); any note once older than `keepMs`. Per
 * endpoint, notes are kept in the order they were last written, so the old ones are at the front.
 */
export class ParkedTasks {
  private readonly byEndpoint = new Map<string, Map<string, Note>>();

  /** When a delivery of the task to the endpoint was last parked here (ms; Infinity while one commits), or -Infinity. */
  since(endpointId: string, taskId: string): number {
    const note = this.byEndpoint.get(endpointId)?.get(taskId);
    if (!note) return Number.NEGATIVE_INFINITY;
    return note.pending > 0 ? Number.POSITIVE_INFINITY : note.at;
  }

  /** A park of a delivery of the task to the endpoint begins: call the returned function once it ended (committed or not). */
  parking(endpointId: string, taskId: string): () => void {
    this.write(endpointId, taskId, (note) => ({ at: note.at, pending: note.pending + 1 }));
    return () => this.write(endpointId, taskId, (note) => ({ at: Date.now(), pending: Math.max(0, note.pending - 1) }));
  }

  /** A delivery of the task to the endpoint was parked (committed) at `at`. */
  parked(endpointId: string, taskId: string, at: number): void {
    this.write(endpointId, taskId, (note) => ({ at: Math.max(note.at, at), pending: note.pending }));
  }

  /**
   * The drainer found `withBacklog` (in a query begun at `checkedAt`): the notes of other endpoints
   * written before it go; and every note older than `keepMs`. Never a note of a park still committing.
   */
  forget(withBacklog: ReadonlySet<string>, checkedAt: number, now = Date.now()): void {
    for (const [endpointId, tasks] of this.byEndpoint) {
      const drained = !withBacklog.has(endpointId);
      for (const [taskId, note] of tasks) {
        const old = note.pending === 0 && note.at < (drained ? Math.max(checkedAt, now - keepMs) : now - keepMs);
        if (old) tasks.delete(taskId);
        else if (!drained) break; // the rest were written later
      }
      if (tasks.size === 0) this.byEndpoint.delete(endpointId);
    }
  }

  /** Notes held (all endpoints). */
  get size(): number {
    let size = 0;
    for (const tasks of this.byEndpoint.values()) size += tasks.size;
    return size;
  }

  private write(endpointId: string, taskId: string, next: (note: Note) => Note): void {
    let tasks = this.byEndpoint.get(endpointId);
    if (!tasks) {
      tasks = new Map();
      this.byEndpoint.set(endpointId, tasks);
    }
    const note = tasks.get(taskId) ?? { at: Number.NEGATIVE_INFINITY, pending: 0 };
    tasks.delete(taskId);
    tasks.set(taskId, next(note));
  }
}
