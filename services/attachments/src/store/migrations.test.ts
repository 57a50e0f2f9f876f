import { randomBytes, randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLogger, runMigrations } from '@tws/common';

/*
 * Upgrading a database that has attachments from before 002_immutable_objects: they keep serving
 * their upload key (recorded as their object key), and the sweeper has nothing to clear for them.
 */

const stack = inject('stack');
const migrations = fileURLToPath(new URL('../../migrations', import.meta.url));
const schema = `attachments_upgrade_${randomBytes(4).toString('hex')}`;
const logger = createLogger('migrations-test', 'silent');

describe('attachments migration 002_immutable_objects on an existing database', () => {
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  const firstOnly = mkdtempSync(path.join(os.tmpdir(), 'attachments-migrations-'));

  afterAll(async () => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await client.end();
    rmSync(firstOnly, { recursive: true, force: true });
  });

  it('records the upload key as the object key of existing attachments and marks them cleared', async () => {
    await client.connect();
    copyFileSync(path.join(migrations, '001_uploads.sql'), path.join(firstOnly, '001_uploads.sql'));
    await runMigrations({ url: stack.databaseUrl, schema, directory: firstOnly, logger });
    const workspaceId = randomUUID();
    const [registered, pending] = [randomUUID(), randomUUID()];
    for (const id of [registered, pending]) {
      await client.query(
        `INSERT INTO ${schema}.uploads (id, workspace_id, object_key, content_type, size_bytes, expires_at)
         VALUES ($1, $2, $3, 'text/plain', 3, now() + interval '1 day')`,
        [id, workspaceId, `workspaces/${workspaceId}/${id}`],
      );
    }
    await client.query(
      `INSERT INTO ${schema}.attachments (id, workspace_id, task_id, name, content_type, size_bytes, download_token)
       VALUES ($1, $2, $3, 'a.txt', 'text/plain', 3, $4)`,
      [registered, workspaceId, randomUUID(), randomBytes(32).toString('base64url')],
    );

    expect(await runMigrations({ url: stack.databaseUrl, schema, directory: migrations, logger })).toContain('002_immutable_objects.sql');

    const attachment = await client.query<{ object_key: string }>(`SELECT object_key FROM ${schema}.attachments WHERE id = $1`, [registered]);
    expect(attachment.rows[0]?.object_key).toBe(`workspaces/${workspaceId}/${registered}`);
    const uploads = await client.query<{ id: string; cleared: boolean }>(
      `SELECT id, upload_object_cleared_at IS NOT NULL AS cleared FROM ${schema}.uploads`,
    );
    expect(Object.fromEntries(uploads.rows.map((row) => [row.id, row.cleared]))).toEqual({ [registered]: true, [pending]: false });
  });
});
