import type { Queryable } from '@tws/common';
import { listenerNamePrefix, revocationAcksChannel, revocationsChannel, type RevocationAck, type RevocationNotice } from '../domain/revocations.js';

/** Notifies a revocation; inside a transaction, Postgres delivers it when (and only if) that commits. */
export async function announceRevocation(db: Queryable, notice: RevocationNotice): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [revocationsChannel, JSON.stringify(notice)]);
}

export async function announceAck(db: Queryable, ack: RevocationAck): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [revocationAcksChannel, JSON.stringify(ack)]);
}

/**
 * The replicas whose revocation session is LISTENing now (each names itself in `application_name`
 * after its LISTEN ran). Read inside the revoking transaction, before it commits: every session listed
 * then hears the notification, so each of them owes an acknowledgement.
 */
export async function listeningReplicas(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>({
    name: 'tasks-revocation-listeners',
    text: 'SELECT application_name AS name FROM pg_stat_activity WHERE datname = current_database() AND starts_with(application_name, $1)',
    values: [listenerNamePrefix],
  });
  return [...new Set(rows.map((row) => row.name.slice(listenerNamePrefix.length)))];
}

/** Starts listening on a dedicated session, then names it (so revokers count it only once it hears). */
export async function listenForRevocations(db: Queryable, replicaId: string): Promise<void> {
  await db.query(`LISTEN ${revocationsChannel}`);
  await db.query(`LISTEN ${revocationAcksChannel}`);
  await db.query("SELECT set_config('application_name', $1, false)", [`${listenerNamePrefix}${replicaId}`]);
}
