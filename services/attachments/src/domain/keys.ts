/*
 * Object keys; built from ids only, never from client input. An upload's presigned PUT URL can write
 * its upload key for 7 days; a registered attachment's bytes live under a key of their own that no
 * URL handed out can write, so they cannot change after registration.
 */

/** Where the client PUTs an upload's bytes. */
export const objectKeyOf = (workspaceId: string, uploadId: string): string => `workspaces/${workspaceId}/${uploadId}`;

/** Where a registered attachment's bytes are copied to (its id is the upload's id). */
export const attachmentKeyOf = (workspaceId: string, attachmentId: string): string => `workspaces/${workspaceId}/attachments/${attachmentId}`;
