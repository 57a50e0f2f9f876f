import { z } from 'zod';
import { PathId } from '../schemas/common.js';

/** API key only: a Bearer token gets 403 with this message. */
export const apiKeyOnly = 'webhooks are managed with an API key';
export const config = { auth: { apiKeyOnly } };
export const apiKeyOnlyDescription = `API key only: a Bearer token gets 403 ("${apiKeyOnly}").`;
/** OpenAPI: these operations accept the API key scheme only. */
export const security = [{ apiKey: [] }];
export const WebhookParams = z.object({ id: PathId });
