import { existsSync, readdirSync, mkdtempSync, chownSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { progress, DevstackError } from '../progress.js';
import { freePort, runCommand, startProcess, waitUntil, type ManagedProcess } from '../processes.js';

export interface RunningPostgres {
  url: string;
  port: number;
  /** Stops the server, keeping its data, and starts it again on the same port (fault tests). */
  restart(downMs?: number): Promise<void>;
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

const databaseName = 'task_workspace';

function findPostgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((version) => existsSync(path.join(base, version, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(base, versions[0], 'bin') : undefined;
}

/** Installs PostgreSQL from Debian's packages when it is not there yet. */
export async function ensurePostgres(): Promise<string> {
  const found = findPostgresBin();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new DevstackError('PostgreSQL is not installed and this is not root: run `sudo apt-get install -y postgresql`');
  }
  progress('installing PostgreSQL from Debian packages (apt-get install postgresql)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await runCommand('apt-get', ['update', '-qq'], { what: 'apt-get update', env });
  await runCommand('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'postgresql'], {
    what: 'apt-get install postgresql',
    env,
  });
  const installed = findPostgresBin();
  if (!installed) throw new DevstackError('apt-get install postgresql finished but no postgres binary was found');
  return installed;
}

/** PostgreSQL refuses to run as root; run it as the `postgres` user the Debian package creates. */
async function serverIdentity(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number((await runCommand('id', ['-u', 'postgres'], { what: 'looking up the postgres user' })).trim());
  const gid = Number((await runCommand('id', ['-g', 'postgres'], { what: 'looking up the postgres user' })).trim());
  return { uid, gid };
}

export async function startPostgres(logDir: string): Promise<RunningPostgres> {
  const bin = await ensurePostgres();
  const identity = await serverIdentity();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tws-pg-'));
  if (identity) chownSync(dataDir, identity.uid, identity.gid);
  const port = await freePort();
  progress(`starting PostgreSQL on 127.0.0.1:${port}`);
  await runCommand(
    path.join(bin, 'initdb'),
    ['-D', path.join(dataDir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale'],
    { what: 'initdb', ...identity },
  );
  let server: ManagedProcess | undefined;
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const startServer = async (): Promise<void> => {
    server = startProcess(
      'postgres',
      path.join(bin, 'postgres'),
      [
        '-D', path.join(dataDir, 'data'),
        '-p', String(port),
        '-k', dataDir,
        '-c', 'listen_addresses=127.0.0.1',
        '-c', 'max_connections=400',
        // A throw-away local cluster: durability across power loss is not needed, speed is.
        '-c', 'fsync=off',
        '-c', 'full_page_writes=off',
        // Extra settings for experiments, e.g. TWS_POSTGRES_SETTINGS="shared_preload_libraries=pg_stat_statements".
        ...(process.env.TWS_POSTGRES_SETTINGS ?? '').split(/\s+/).filter(Boolean).flatMap((setting) => ['-c', setting]),
      ],
      { logDir, stopSignal: 'SIGINT', ...identity },
    );
    await waitUntil('PostgreSQL', () => canQuery(adminUrl), { timeoutMs: 30_000, process: server });
  };
  await startServer();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${databaseName}`);
  await admin.end();
  const stopServer = async (): Promise<void> => {
    await server?.stop(20_000);
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${databaseName}`,
    port,
    stopServer,
    startServer,
    async restart(downMs = 0) {
      await stopServer();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await startServer();
    },
    async stop() {
      await stopServer();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}
