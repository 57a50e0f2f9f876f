import { fakeCredentials, ids, startGateway, type Harness } from './harness.js';

/*
 * Set-up the auth plugin's unit tests (plugins/auth*.test.ts) share: a gateway whose fake tasks
 * service knows the harness's API key and member, and answers GetWorkspace for the workspace.
 */

const workspaceJson = { workspace: { id: ids.workspace, name: 'Acme', urlId: 'acme', taskPrefix: 'AC', plan: 'PLAN_FREE' } };

/** startGateway(env) with the fake's credentials and GetWorkspace answering `workspaceJson`. */
export async function startAuthGateway(env: Record<string, string> = {}): Promise<Harness> {
  const h = await startGateway(env);
  fakeCredentials(h.fake);
  h.fake.handlers.set('GetWorkspace', () => workspaceJson);
  return h;
}
