import { z } from 'zod';
import type { Attachment__Output } from '@tws/proto-types/generated/attachments/v1/Attachment';
import { BodyId, Timestamp } from '../schemas/common.js';

/** Options of the attachment route plugins. */
export interface AttachmentRoutesOptions {
  /**
   * Public base URL of the API (gateway `PUBLIC_BASE_URL`, e.g. `https://api.example.com`), used in
   * the permanent download URLs. Required: a URL the API hands out is never built from a request's
   * `Host` or `X-Forwarded-*` headers, which any client can forge.
   */
  publicBaseUrl: string;
}

/** Base of the API's absolute URLs, without a trailing slash. */
export function publicBase(options: AttachmentRoutesOptions): string {
  return options.publicBaseUrl.replace(/\/+$/, '');
}

/**
 * The permanent download URL: a capability (attachment id + 256-bit random token, base64url), so it
 * needs no credentials and works in browsers, <img> tags and markdown. It never changes and stays
 * valid across restarts; it stops working when the attachment is removed (its task deleted).
 */
export function downloadUrl(base: string, attachment: Pick<Attachment__Output, 'id' | 'downloadToken'>): string {
  return `${base}/v1/attachments/${encodeURIComponent(attachment.id)}/content?token=${encodeURIComponent(attachment.downloadToken)}`;
}

/** MIME type as declared at upload; checked by the attachments service (RFC 9110 media type). */
export const ContentType = z
  .string()
  .min(1)
  .max(255)
  .meta({ description: 'MIME type, e.g. `image/png` or `text/plain; charset=utf-8`.', examples: ['image/png'] });

/** Size in bytes; the plan limit is checked by the attachments service. */
export const Size = z
  .int()
  .min(1)
  .meta({ description: 'Exact file size in bytes. At most 25 MB on the free plan, 100 MB on pro (MB = 2^20 bytes).', examples: [52_431] });

export const UploadRequestBody = z.strictObject({ contentType: ContentType, size: Size });

export const UploadResponse = z
  .object({
    uploadUrl: z.string().meta({
      description:
        'Presigned object-storage URL, valid 7 days. PUT the file there with exactly the declared `Content-Type` and `Content-Length`; other values are refused by the storage.',
    }),
    attachmentId: z.string().meta({ description: 'Register the uploaded file with `POST /v1/tasks/{id}/attachments`.' }),
  })
  .meta({ id: 'AttachmentUpload' });

export const RegisterBody = z.strictObject({
  attachmentId: BodyId.meta({ description: 'From `POST /v1/attachments/upload`.' }),
  name: z
    .string()
    .min(1)
    .max(4096)
    .meta({
      description:
        'File name. Path separators become `_`, control characters are removed, unicode is kept; at most 255 characters after that.',
    }),
  contentType: ContentType.meta({ description: 'Must equal the type declared for the upload.' }),
  size: Size.meta({ description: 'Must equal the size declared for the upload.' }),
});

export const RegisteredAttachment = z
  .object({
    id: z.string(),
    url: z.string().meta({ description: 'Permanent download URL; needs no credentials (keep it private like the file).' }),
  })
  .meta({ id: 'RegisteredAttachment' });

export const Attachment = z
  .object({
    id: z.string(),
    name: z.string(),
    contentType: z.string(),
    size: z.int().meta({ description: 'Bytes.' }),
    url: z.string().meta({ description: 'Permanent download URL (redirects to the file).' }),
    createdAt: Timestamp,
  })
  .meta({ id: 'Attachment' });

export function toAttachment(attachment: Attachment__Output, base: string): z.input<typeof Attachment> {
  return {
    id: attachment.id,
    name: attachment.name,
    contentType: attachment.contentType,
    // int64: a decimal string per the generated types; String() also covers a Long at run time.
    size: Number(String(attachment.sizeBytes)),
    url: downloadUrl(base, attachment),
    createdAt: attachment.createdAt,
  };
}
