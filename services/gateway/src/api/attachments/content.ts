import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../../plugins/errors.js';
import { errorResponses, PathId } from '../schemas/common.js';

const notFound = (): HttpError => new HttpError(404, 'attachment not found');

/**
 * GET /v1/attachments/:id/content?token=… — the permanent download URL of an attachment. It is a
 * capability URL (the 256-bit token is the credential): it declares `auth: false`, and its requests
 * are rate-limited per client IP. Answers 302 to a short-lived presigned GET of the object, whose
 * response names the file (Content-Disposition) and carries the stored content type; 404 for an
 * unknown id or a wrong token alike.
 */
const attachmentContentRoute: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/attachments/:id/content',
    {
      config: { auth: false },
      schema: {
        tags: ['Attachments'],
        operationId: 'downloadAttachment',
        summary: 'Download an attachment (the permanent `url` of an attachment)',
        description:
          'Needs no credentials: the `token` in the URL is the credential. Redirects (302) to a short-lived URL of the file.',
        security: [],
        params: z.object({ id: PathId }),
        // Any token that does not match (too long, repeated, empty) is "not found", never 400: the
        // documented answers of a capability URL are 302, 404 and 429.
        querystring: z.object({
          token: z.unknown().optional().meta({ type: 'string', maxLength: 256, description: 'The download token of the URL' }),
        }),
        response: {
          302: z.undefined().describe('Redirect to the file; `Location` is valid for a few minutes'),
          ...errorResponses(404, 429),
        },
      },
    },
    async (request, reply) => {
      const { token } = request.query;
      if (typeof token !== 'string' || token === '' || token.length > 256) throw notFound();
      const { url } = await app.attachmentsApi.GetDownloadUrl({ attachmentId: request.params.id, downloadToken: token });
      return reply
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .redirect(url, 302);
    },
  );
};

export default attachmentContentRoute;
