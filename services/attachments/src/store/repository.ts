import { inTransaction, isPgError, pgErrorCodes, recordAudit, type Pool, type PoolClient, type Queryable } from '@tws/common';
import { z } from 'zod';
import { attachmentKeyOf } from '../domain/keys.js';

const uploadRow = z.object({
  id: z.string(),
  workspace_id: z.string(),
  object_key: z.string(),
  content_type: z.string(),
  size_bytes: z.coerce.number().int(),
  expires_at: z.date(),
  revoked_at: z.date().nullable(),
});

const attachmentRow = z.object({
  id: z.string(),
  workspace_id: z.string(),
  task_id: z.string(),
  name: z.string(),
  content_type: z.string(),
  size_bytes: z.coerce.number().int(),
  download_token: z.string(),
  created_at: z.date(),
  object_key: z.string(),
});

const usageRow = z.object({ count: z.coerce.number().int(), bytes: z.coerce.number().int() });

export interface Upload {
  id: string;
  workspaceId: string;
  objectKey: string;
  contentType: string;
  size: number;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface AttachmentRecord {
  id: string;
  workspaceId: string;
  taskId: string;
  name: string;
  contentType: string;
  size: number;
  downloadToken: string;
  createdAt: Date;
  objectKey: string;
}

function toUpload(row: unknown): Upload {
  const r = uploadRow.parse(row);
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    objectKey: r.object_key,
    contentType: r.content_type,
    size: r.size_bytes,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}

function toAttachment(row: unknown): AttachmentRecord {
  const r = attachmentRow.parse(row);
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    taskId: r.task_id,
    name: r.name,
    contentType: r.content_type,
    size: r.size_bytes,
    downloadToken: r.download_token,
    createdAt: r.created_at,
    objectKey: r.object_key,
  };
}

const attachmentColumns = `a.id, a.workspace_id, a.task_id, a.name, a.content_type, a.size_bytes, a.download_token, a.created_at, a.object_key`;
const uploadColumns = `u.id, u.workspace_id, u.object_key, u.content_type, u.size_bytes, u.expires_at, u.revoked_at`;

export async function insertUpload(
  db: Queryable,
  upload: { id: string; workspaceId: string; objectKey: string; contentType: string; size: number; expiresAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO uploads (id, workspace_id, object_key, content_type, size_bytes, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    [upload.id, upload.workspaceId, upload.objectKey, upload.contentType, upload.size, upload.expiresAt],
  );
}

/** The upload if it belongs to the workspace. */
export async function findUpload(db: Queryable, workspaceId: string, id: string): Promise<Upload | null> {
  const { rows } = await db.query(`SELECT ${uploadColumns} FROM uploads u WHERE id = $1 AND workspace_id = $2`, [id, workspaceId]);
  return rows[0] ? toUpload(rows[0]) : null;
}

/**
 * Runs `work` in a transaction holding the upload's row lock (null when the upload is not the
 * workspace's), so registrations of one upload run one after another and the sweeper cannot delete it
 * meanwhile: once one registration committed, every later one sees its attachment.
 */
export async function withUploadLocked<T>(
  pool: Pool,
  workspaceId: string,
  id: string,
  work: (client: PoolClient, upload: Upload | null) => Promise<T>,
): Promise<T> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query(`SELECT ${uploadColumns} FROM uploads u WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, [
      id,
      workspaceId,
    ]);
    return work(client, rows[0] ? toUpload(rows[0]) : null);
  });
}

export async function findAttachment(db: Queryable, id: string): Promise<AttachmentRecord | null> {
  const { rows } = await db.query(`SELECT ${attachmentColumns} FROM attachments a WHERE a.id = $1`, [id]);
  return rows[0] ? toAttachment(rows[0]) : null;
}

/**
 * Inserts the attachment unless one with this id exists. Returns the stored record and whether
 * this call created it; two concurrent calls meet at the primary key and both see the winner's row.
 */
export async function insertAttachmentOnce(
  db: Queryable,
  attachment: Omit<AttachmentRecord, 'createdAt'>,
): Promise<{ record: AttachmentRecord; created: boolean }> {
  const inserted = await db.query(
    `INSERT INTO attachments (id, workspace_id, task_id, name, content_type, size_bytes, download_token, object_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO NOTHING
     RETURNING id`,
    [
      attachment.id,
      attachment.workspaceId,
      attachment.taskId,
      attachment.name,
      attachment.contentType,
      attachment.size,
      attachment.downloadToken,
      attachment.objectKey,
    ],
  );
  const record = await findAttachment(db, attachment.id);
  if (!record) throw new Error(`attachment ${attachment.id} vanished right after it was written`);
  return { record, created: inserted.rowCount === 1 };
}

/** How many attachments the workspace has registered, and their total size in bytes. */
export async function workspaceUsage(db: Queryable, workspaceId: string): Promise<{ count: number; bytes: number }> {
  const { rows } = await db.query({
    name: 'attachments-workspace-usage',
    text: 'SELECT count(*) AS count, coalesce(sum(size_bytes), 0) AS bytes FROM attachments WHERE workspace_id = $1',
    values: [workspaceId],
  });
  return usageRow.parse(rows[0]);
}

export async function listTaskAttachments(db: Queryable, workspaceId: string, taskId: string): Promise<AttachmentRecord[]> {
  const { rows } = await db.query(
    `SELECT ${attachmentColumns} FROM attachments a
     WHERE a.workspace_id = $1 AND a.task_id = $2 ORDER BY a.created_at, a.id`,
    [workspaceId, taskId],
  );
  return rows.map(toAttachment);
}

/**
 * Removes the attachments of a task: their rows go, their uploads are revoked (never registrable
 * again; the sweeper deletes them once the upload URL expired), and `removeObjects` deletes the
 * objects (attachment copies and upload objects) before the transaction commits, so a failure leaves
 * the rows for a retry and never an object without a row.
 */
export async function deleteTaskAttachments(
  pool: Pool,
  workspaceId: string,
  taskId: string,
  removeObjects: (keys: string[]) => Promise<void>,
): Promise<number> {
  return inTransaction(pool, async (client) => {
    const deleted = await client.query<{ id: string; object_key: string }>(
      `DELETE FROM attachments WHERE workspace_id = $1 AND task_id = $2 RETURNING id, object_key`,
      [workspaceId, taskId],
    );
    if (deleted.rows.length === 0) return 0;
    await recordAudit(
      client,
      ...deleted.rows.map((row) => ({ workspaceId, action: 'attachment.deleted', resourceType: 'attachment', resourceId: row.id })),
    );
    const revoked = await client.query<{ object_key: string }>(
      `UPDATE uploads SET revoked_at = now() WHERE id = ANY($1::uuid[]) RETURNING object_key`,
      [deleted.rows.map((row) => row.id)],
    );
    await removeObjects([...new Set([...deleted.rows, ...revoked.rows].map((row) => row.object_key))]);
    return deleted.rows.length;
  });
}

/** Uploads without an attachment whose URL expired before `before`, oldest first. */
export async function findExpiredUploads(db: Queryable, before: Date, limit: number): Promise<Upload[]> {
  const { rows } = await db.query(
    `SELECT ${uploadColumns} FROM uploads u
     WHERE expires_at < $1 AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.id = u.id)
     ORDER BY expires_at LIMIT $2`,
    [before, limit],
  );
  return rows.map(toUpload);
}

/**
 * Deletes an upload that still has no attachment, and its objects, in one transaction: the upload
 * object and the attachment copy a registration may have made before failing (crash, lost database)
 * without recording it. While it runs, the row lock makes a concurrent registration wait and then find
 * no upload; if a registration won, the foreign key makes this delete fail. Returns false when the
 * upload was registered or is already gone.
 */
export async function deleteUnregisteredUpload(pool: Pool, id: string, removeObjects: (keys: string[]) => Promise<void>): Promise<boolean> {
  try {
    return await inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ object_key: string; workspace_id: string }>(
        `DELETE FROM uploads u WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.id = u.id) RETURNING object_key, workspace_id`,
        [id],
      );
      const row = rows[0];
      if (!row) return false;
      await removeObjects([row.object_key, attachmentKeyOf(row.workspace_id, id)]);
      return true;
    });
  } catch (error) {
    if (isPgError(error, pgErrorCodes.foreignKeyViolation)) return false;
    throw error;
  }
}

/** Tasks that have attachments, in task id order after `afterTaskId`. */
export async function tasksWithAttachments(
  db: Queryable,
  afterTaskId: string | null,
  limit: number,
): Promise<Array<{ workspaceId: string; taskId: string }>> {
  const { rows } = await db.query<{ workspace_id: string; task_id: string }>(
    `SELECT DISTINCT task_id, workspace_id FROM attachments
     WHERE ($1::uuid IS NULL OR task_id > $1::uuid) ORDER BY task_id LIMIT $2`,
    [afterTaskId, limit],
  );
  return rows.map((row) => ({ workspaceId: row.workspace_id, taskId: row.task_id }));
}

/**
 * Registered uploads whose URL expired before `before` and whose upload object was not cleared yet:
 * the bytes were copied to the attachment's own key, so what is left at the upload key (a copy a crash
 * kept, or bytes PUT again after registration) is unused. Excludes attachments registered before
 * 002_immutable_objects, which still serve their upload key.
 */
export async function findUnclearedUploadObjects(db: Queryable, before: Date, limit: number): Promise<Array<{ id: string; objectKey: string }>> {
  const { rows } = await db.query<{ id: string; object_key: string }>(
    `SELECT u.id, u.object_key FROM uploads u JOIN attachments a ON a.id = u.id
     WHERE u.expires_at < $1 AND u.upload_object_cleared_at IS NULL AND a.object_key <> u.object_key
     ORDER BY u.expires_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((row) => ({ id: row.id, objectKey: row.object_key }));
}

export async function markUploadObjectsCleared(db: Queryable, ids: readonly string[]): Promise<void> {
  await db.query(`UPDATE uploads SET upload_object_cleared_at = now() WHERE id = ANY($1::uuid[])`, [ids]);
}
