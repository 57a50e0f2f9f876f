import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cacheDir } from '../paths.js';
import { progress } from '../progress.js';
import { freePort, runCommand, startProcess, waitUntil } from '../processes.js';

/** MinIO has no semver tags; this is the last commit of the archived repository, pinned. */
export const minioModule = 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c';

export interface RunningMinio {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  stop(): Promise<void>;
}

/** Builds the MinIO server with `go install` into the cache, once (a few minutes the first time). */
export async function ensureMinio(): Promise<string> {
  const binDir = path.join(cacheDir, 'minio', 'bin');
  const binary = path.join(binDir, 'minio');
  if (existsSync(binary)) return binary;
  progress(`building MinIO with go install ${minioModule} (first run only; takes a few minutes)…`);
  mkdirSync(binDir, { recursive: true });
  await runCommand('go', ['install', minioModule], {
    what: 'building MinIO with go install (needs go on PATH)',
    env: { ...process.env, GOBIN: binDir, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
  });
  progress(`MinIO cached at ${binary}`);
  return binary;
}

export async function startMinio(logDir: string): Promise<RunningMinio> {
  const binary = await ensureMinio();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tws-minio-'));
  const [port, consolePort] = [await freePort(), await freePort()];
  const accessKey = 'devstack';
  const secretKey = 'devstack-secret-key';
  progress(`starting MinIO on 127.0.0.1:${port}`);
  const server = startProcess(
    'minio',
    binary,
    ['server', path.join(dataDir, 'data'), '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      logDir,
      env: {
        ...process.env,
        MINIO_ROOT_USER: accessKey,
        MINIO_ROOT_PASSWORD: secretKey,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
        HOME: dataDir,
      },
    },
  );
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUntil(
    'MinIO',
    async () => (await fetch(`${endpoint}/minio/health/ready`)).ok,
    { timeoutMs: 30_000, process: server },
  );
  return {
    endpoint,
    accessKey,
    secretKey,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
