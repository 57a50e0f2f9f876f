import { runBackend } from '@tws/common';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

await runBackend('attachments', loadConfig, buildApp);
