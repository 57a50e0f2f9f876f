import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assertPathId, ErrorBody, errorResponses, PathId } from '../schemas/common.js';
import {
  Attachment,
  downloadUrl,
  publicBase,
  RegisterBody,
  RegisteredAttachment,
  toAttachment,
  UploadRequestBody,
  UploadResponse,
  type AttachmentRoutesOptions,
} from './schemas.js';

export type { AttachmentRoutesOptions } from './schemas.js';

/**
 * The authenticated attachment routes: POST /v1/attachments/upload, POST /v1/tasks/:id/attachments,
 * GET /v1/tasks/:id/attachments. The download route (`./content.ts`) needs no credentials.
 */
const attachmentRoutes: FastifyPluginAsyncZod<AttachmentRoutesOptions> = async (app, options) => {
  app.post(
    '/attachments/upload',
    {
      config: { auth: true },
      schema: {
        tags: ['Attachments'],
        operationId: 'requestAttachmentUpload',
        summary: 'Step 1 of 3: get a presigned URL to upload a file',
        description:
          'Declare the file\'s MIME type and exact size; 400 when the size exceeds the plan limit (25 MB free, 100 MB pro; MB = 2^20 bytes). ' +
          'Then PUT the bytes to `uploadUrl` with exactly that `Content-Type` and `Content-Length` (step 2), and register the file on a task (step 3).',
        body: UploadRequestBody,
        response: { 200: UploadResponse, ...errorResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (request) => {
      const upload = await app.attachmentsApi.CreateUpload({
        workspaceId: request.principal.workspaceId,
        contentType: request.body.contentType,
        sizeBytes: request.body.size,
      });
      return { uploadUrl: upload.uploadUrl, attachmentId: upload.attachmentId };
    },
  );

  app.post(
    '/tasks/:id/attachments',
    {
      config: { auth: true },
      schema: {
        tags: ['Attachments'],
        operationId: 'registerAttachment',
        summary: 'Step 3 of 3: attach an uploaded file to a task',
        description:
          '404 unless the task and the upload belong to the workspace; 400 unless the file was uploaded and its stored size and type equal the declared ones. ' +
          'Registering the same upload on the same task again returns the same attachment (409 on another task).',
        params: z.object({ id: PathId }),
        body: RegisterBody,
        response: {
          201: RegisteredAttachment.describe('Attachment registered (or already registered on this task)'),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
          409: ErrorBody.describe('The upload is already attached to another task'),
        },
      },
    },
    async (request, reply) => {
      assertPathId(request.params.id, 'task');
      const { attachmentId, name, contentType, size } = request.body;
      const { attachment } = await app.attachmentsApi.RegisterAttachment({
        workspaceId: request.principal.workspaceId,
        taskId: request.params.id,
        attachmentId,
        name,
        contentType,
        sizeBytes: size,
      });
      if (!attachment) throw new Error('RegisterAttachment answered without an attachment');
      return reply.code(201).send({ id: attachment.id, url: downloadUrl(publicBase(options), attachment) });
    },
  );

  app.get(
    '/tasks/:id/attachments',
    {
      config: { auth: true },
      schema: {
        tags: ['Attachments'],
        operationId: 'listTaskAttachments',
        summary: 'Attachments of a task, oldest first',
        params: z.object({ id: PathId }),
        response: { 200: z.array(Attachment), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      assertPathId(request.params.id, 'task');
      const { attachments } = await app.attachmentsApi.ListTaskAttachments({
        workspaceId: request.principal.workspaceId,
        taskId: request.params.id,
      });
      const base = publicBase(options);
      return attachments.map((attachment) => toAttachment(attachment, base));
    },
  );
};

export default attachmentRoutes;
