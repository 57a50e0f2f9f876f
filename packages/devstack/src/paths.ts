import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Downloads and builds are cached here, outside the repository, and reused by every clone. */
export const cacheDir = process.env.TWS_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'task-workspace');

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export const assetsDir = path.join(repoRoot, 'packages', 'devstack', 'assets');
