import { inTransaction, type Pool, type PoolClient } from '@tws/common';
import { z } from 'zod';

type Queryable = Pool | PoolClient;

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

const attachmentColumns = `a.id, a.workspace_id, a.task_id, a.name, a.content_type, a.size_bytes, a.download_token, a.created_at, u.object_key`;

/** Postgres error codes the service reacts to. */
export const pgErrorCodes = { foreignKeyViolation: '23503' } as const;

export function pgErrorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

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
  const { rows } = await db.query(
    `SELECT id, workspace_id, object_key, content_type, size_bytes, expires_at, revoked_at FROM uploads WHERE id = $1 AND workspace_id = $2`,
    [id, workspaceId],
  );
  return rows[0] ? toUpload(rows[0]) : null;
}

export async function findAttachment(db: Queryable, id: string): Promise<AttachmentRecord | null> {
  const { rows } = await db.query(`SELECT ${attachmentColumns} FROM attachments a JOIN uploads u ON u.id = a.id WHERE a.id = $1`, [id]);
  return rows[0] ? toAttachment(rows[0]) : null;
}

/**
 * Inserts the attachment unless one with this id exists. Returns the stored record and whether
 * this call created it; two concurrent calls meet at the primary key and both see the winner's row.
 */
export async function insertAttachmentOnce(
  pool: Pool,
  attachment: { id: string; workspaceId: string; taskId: string; name: string; contentType: string; size: number; downloadToken: string },
): Promise<{ record: AttachmentRecord; created: boolean }> {
  const inserted = await pool.query(
    `INSERT INTO attachments (id, workspace_id, task_id, name, content_type, size_bytes, download_token)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO NOTHING
     RETURNING id`,
    [attachment.id, attachment.workspaceId, attachment.taskId, attachment.name, attachment.contentType, attachment.size, attachment.downloadToken],
  );
  const record = await findAttachment(pool, attachment.id);
  if (!record) throw new Error(`attachment ${attachment.id} vanished right after it was written`);
  return { record, created: inserted.rowCount === 1 };
}

export async function listTaskAttachments(db: Queryable, workspaceId: string, taskId: string): Promise<AttachmentRecord[]> {
  const { rows } = await db.query(
    `SELECT ${attachmentColumns} FROM attachments a JOIN uploads u ON u.id = a.id
     WHERE a.workspace_id = $1 AND a.task_id = $2 ORDER BY a.created_at, a.id`,
    [workspaceId, taskId],
  );
  return rows.map(toAttachment);
}

/**
 * Removes the attachments of a task: their rows go, their uploads are revoked (never registrable
 * again; the sweeper deletes them once the upload URL expired), and `removeObjects` deletes the
 * objects before the transaction commits, so a failure leaves the rows for a retry and never an
 * object without a row.
 */
export async function deleteTaskAttachments(
  pool: Pool,
  workspaceId: string,
  taskId: string,
  removeObjects: (keys: string[]) => Promise<void>,
): Promise<number> {
  return inTransaction(pool, async (client) => {
    const deleted = await client.query<{ id: string }>(
      `DELETE FROM attachments WHERE workspace_id = $1 AND task_id = $2 RETURNING id`,
      [workspaceId, taskId],
    );
    if (deleted.rows.length === 0) return 0;
    const revoked = await client.query<{ object_key: string }>(
      `UPDATE uploads SET revoked_at = now() WHERE id = ANY($1::uuid[]) RETURNING object_key`,
      [deleted.rows.map((row) => row.id)],
    );
    await removeObjects(revoked.rows.map((row) => row.object_key));
    return deleted.rows.length;
  });
}

/** Uploads without an attachment whose URL expired before `before`, oldest first. */
export async function findExpiredUploads(db: Queryable, before: Date, limit: number): Promise<Upload[]> {
  const { rows } = await db.query(
    `SELECT id, workspace_id, object_key, content_type, size_bytes, expires_at, revoked_at FROM uploads u
     WHERE expires_at < $1 AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.id = u.id)
     ORDER BY expires_at LIMIT $2`,
    [before, limit],
  );
  return rows.map(toUpload);
}

/**
 * Deletes an upload that still has no attachment, and its object, in one transaction. While it runs,
 * the row lock makes a concurrent registration wait and then fail on the foreign key; if a
 * registration won, the foreign key makes this delete fail. Returns false when the upload was
 * registered or is already gone.
 */
export async function deleteUnregisteredUpload(pool: Pool, id: string, removeObject: (key: string) => Promise<void>): Promise<boolean> {
  try {
    return await inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ object_key: string }>(
        `DELETE FROM uploads u WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.id = u.id) RETURNING object_key`,
        [id],
      );
      const row = rows[0];
      if (!row) return false;
      await removeObject(row.object_key);
      return true;
    });
  } catch (error) {
    if (pgErrorCode(error) === pgErrorCodes.foreignKeyViolation) return false;
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
