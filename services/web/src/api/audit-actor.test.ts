import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminClient, asPeople, type SignedIn, signIn, startWeb, uniqueEmail, type WebHarness } from '../testing/harness.js';

/**
 * The web app names the signed-in person as the audit actor of what they change (issue #19 item 3):
 * through the app's real routes and the real tasks service, the audit row of a key created on the
 * settings page names the person's user id, while the workspace's first key (admin CLI) is `system`.
 */
const stack = inject('stack');
let h: WebHarness;
let db: pg.Client;
const admin = adminClient(stack);
const email = uniqueEmail('audit-owner');
let owner: SignedIn;
let workspace: { id: string; urlId: string };

beforeAll(async () => {
  h = await startWeb(stack);
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  workspace = await admin.createWorkspace(`Audit actor ${process.pid}`, email);
  owner = await signIn(h, email);
});
afterAll(async () => {
  admin.close();
  await db?.end();
  await h?.close();
});

const { post } = asPeople(() => h);

describe('the audit actor of the web app', () => {
  it('a key created on the settings page is audited as the person; the admin CLI\'s as system', async () => {
    const created = await post(`/${workspace.urlId}/settings/api-keys`, owner, { name: 'From the page' });
    expect(created.statusCode, created.body).toBe(201);
    const { rows } = await db.query<{ actor_type: string; actor_id: string | null; user_id: string; name: string }>(
      `SELECT a.actor_type, a.actor_id, k.user_id::text, k.name
       FROM tasks.audit_events a JOIN tasks.api_keys k ON k.id::text = a.resource_id
       WHERE a.workspace_id = $1 AND a.action = 'apiKey.created' ORDER BY k.name`,
      [workspace.id],
    );
    expect(rows).toHaveLength(2);
    const byName = new Map(rows.map((row) => [row.name, row]));
    expect(byName.get('Default key')).toMatchObject({ actor_type: 'system', actor_id: null });
    const fromPage = byName.get('From the page')!;
    expect(fromPage).toMatchObject({ actor_type: 'user', actor_id: fromPage.user_id });
  });
});
