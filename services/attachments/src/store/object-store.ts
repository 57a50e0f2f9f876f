import {
  type BucketLocationConstraint,
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ObjectStoreMetrics } from '@tws/common';
import type { AttachmentsConfig } from '../config.js';
import { contentDisposition } from '../domain/content-disposition.js';

export interface StoredObject {
  size: number;
  contentType: string;
}

/**
 * The object storage the service needs, speaking plain S3 (path-style, fixed region) so AWS S3,
 * MinIO, Ceph RGW or Garage all work. Calls go to the internal endpoint; presigned URLs are
 * built for the public endpoint, the address clients reach.
 */
export interface ObjectStore {
  readonly bucket: string;
  /** A PUT URL that only accepts a request with exactly this Content-Type and Content-Length. */
  presignUpload(key: string, upload: { contentType: string; size: number; signedAt: Date; expiresInSeconds: number }): Promise<string>;
  /** A GET URL whose response carries the file name (Content-Disposition) and the stored type. */
  presignDownload(key: string, download: { fileName: string; contentType: string; expiresInSeconds: number }): Promise<string>;
  /**
   * Copies an object inside the bucket, server-side (the bytes never pass through this process; one
   * CopyObject goes up to 5 GiB), with its content type. False when the source does not exist.
   */
  copy(sourceKey: string, targetKey: string): Promise<boolean>;
  /** Size and type of a stored object, or null when there is none. */
  stat(key: string): Promise<StoredObject | null>;
  /** Deletes the objects; keys that do not exist count as deleted. */
  remove(keys: readonly string[]): Promise<void>;
  bucketExists(): Promise<boolean>;
  /** Creates the bucket if it does not exist (idempotent; used by the migration job). */
  ensureBucket(): Promise<void>;
  close(): void;
}

function s3Client(config: AttachmentsConfig, endpoint: string): S3Client {
  const keys = config.S3_ACCESS_KEY && config.S3_SECRET_KEY ? { accessKeyId: config.S3_ACCESS_KEY, secretAccessKey: config.S3_SECRET_KEY } : undefined;
  return new S3Client({
    endpoint,
    region: config.S3_REGION,
    forcePathStyle: true,
    // Without static keys, the SDK's default credential chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY,
    // a web identity token (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN: IRSA, EKS Pod Identity via the
    // container credentials endpoint), shared config/SSO profiles, ECS task role, EC2 instance profile.
    // Presigned URLs are signed with whatever it resolves (temporary credentials add X-Amz-Security-Token).
    ...(keys ? { credentials: keys } : {}),
    // Plain S3 only: no flexible-checksum headers or query parameters that older S3-compatible
    // stores reject (and that a presigned URL would force the client to reproduce).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
}

function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NotFound' || error.name === 'NoSuchKey');
}

/**
 * Times every call of `client` once, at the outermost step (retries included), into
 * s3_request_duration_seconds / s3_request_errors_total; a 404 is an answer, not an error.
 */
function instrument(client: S3Client, metrics: ObjectStoreMetrics): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const started = performance.now();
      const seconds = (): number => (performance.now() - started) / 1000;
      try {
        const result = await next(args);
        metrics.observe(operation, seconds(), 'ok');
        return result;
      } catch (error) {
        metrics.observe(operation, seconds(), isNotFound(error) ? 'not_found' : 'error', error);
        throw error;
      }
    },
    { step: 'initialize', name: 'taskWorkspaceMetrics', priority: 'high' },
  );
}

export function createObjectStore(config: AttachmentsConfig, metrics?: ObjectStoreMetrics): ObjectStore {
  const internal = s3Client(config, config.S3_ENDPOINT);
  if (metrics) instrument(internal, metrics);
  // Presigning is local computation; this client never sends a request.
  const publicSigner = s3Client(config, config.S3_PUBLIC_ENDPOINT);
  const bucket = config.S3_BUCKET;

  return {
    bucket,
    presignUpload(key, upload) {
      return getSignedUrl(
        publicSigner,
        new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: upload.contentType, ContentLength: upload.size }),
        {
          expiresIn: upload.expiresInSeconds,
          signingDate: upload.signedAt,
          // The presigner leaves both unsigned by default; signed, the store itself refuses a PUT
          // with another type or length (SignatureDoesNotMatch).
          signableHeaders: new Set(['content-type', 'content-length']),
        },
      );
    },
    presignDownload(key, download) {
      return getSignedUrl(
        publicSigner,
        new GetObjectCommand({
          Bucket: bucket,
          Key: key,
          ResponseContentDisposition: contentDisposition(download.fileName),
          ResponseContentType: download.contentType,
        }),
        { expiresIn: download.expiresInSeconds },
      );
    },
    async copy(sourceKey, targetKey) {
      try {
        await internal.send(
          new CopyObjectCommand({ Bucket: bucket, Key: targetKey, CopySource: `${bucket}/${sourceKey.split('/').map(encodeURIComponent).join('/')}`, MetadataDirective: 'COPY' }),
        );
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
    async stat(key) {
      try {
        const head = await internal.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { size: head.ContentLength ?? 0, contentType: head.ContentType ?? '' };
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    async remove(keys) {
      for (let start = 0; start < keys.length; start += 1000) {
        const batch = keys.slice(start, start + 1000);
        const result = await internal.send(
          new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
        );
        const failed = (result.Errors ?? []).filter((entry) => entry.Code !== 'NoSuchKey');
        if (failed.length > 0) {
          const first = failed[0];
          throw new Error(`could not delete ${failed.length} object(s), e.g. ${first?.Key}: ${first?.Code} ${first?.Message}`);
        }
      }
    },
    async bucketExists() {
      try {
        await internal.send(new HeadBucketCommand({ Bucket: bucket }));
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
    async ensureBucket() {
      if (await this.bucketExists()) return;
      try {
        await internal.send(
          new CreateBucketCommand({
            Bucket: bucket,
            ...(config.S3_REGION === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: config.S3_REGION as BucketLocationConstraint } }),
          }),
        );
      } catch (error) {
        // Another migration runner created it first.
        if (error instanceof S3ServiceException && (error.name === 'BucketAlreadyOwnedByYou' || error.name === 'BucketAlreadyExists')) return;
        throw error;
      }
    },
    close() {
      internal.destroy();
      publicSigner.destroy();
    },
  };
}
