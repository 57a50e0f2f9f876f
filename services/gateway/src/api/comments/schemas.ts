import { z } from 'zod';
import type { TaskComment__Output } from '@tws/proto-types/generated/tasks/v1/TaskComment';
import { RichTextNode, textMaxLength, Timestamp } from '../schemas/common.js';

export const CommentText = z
  .string()
  .max(textMaxLength)
  .refine((text) => text.trim().length > 0, { error: 'must not be empty' })
  .meta({ description: 'Markdown; blank lines separate blocks.' });

/** The most comments one page lists (the tasks service enforces the same bound). */
export const maxCommentsPerPage = 200;

export const CommentsQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxCommentsPerPage)
    .default(50)
    .meta({ description: `Page size, 1..${maxCommentsPerPage} (default 50).` }),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, { error: 'must be the nextCursor of the previous page' })
    .optional()
    .meta({ description: '`nextCursor` of the previous page (opaque).' }),
});

const nodes = z.array(RichTextNode);

/** A comment as GET /v1/tasks/:id/comments lists it (an addition to the contract: it shows only the id). */
export const Comment = z
  .object({
    id: z.string(),
    text: nodes.meta({ description: 'The comment as a rich-text node array (the node shape of task descriptions).' }),
    authorName: z.string().meta({ description: "The API key's name or the member's name when it was written." }),
    authorId: z.string().nullable().meta({ description: 'The member `userId` who wrote it; null when written with an API key.' }),
    createdAt: Timestamp,
  })
  .meta({ id: 'Comment' });

export const CommentPage = z
  .object({
    comments: z.array(Comment).meta({ description: 'Oldest first (creation time, then id).' }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .meta({ id: 'CommentPage' });

export function toComment(comment: TaskComment__Output): z.output<typeof Comment> {
  const parsed: unknown = JSON.parse(comment.bodyJson);
  return {
    id: comment.id,
    text: nodes.parse(parsed),
    authorName: comment.authorName,
    authorId: comment.authorUserId ?? null,
    createdAt: comment.createdAt,
  };
}
