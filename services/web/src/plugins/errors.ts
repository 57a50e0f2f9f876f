import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { sentences, UserFacingError } from '../domain/errors.js';
import type { SafeHtml } from '../api/html/escape.js';
import { errorPage } from '../api/html/pages.js';
import type { Viewer } from '../api/html/layout.js';

declare module 'fastify' {
  interface FastifyReply {
    /** Sends a server-rendered page (text/html, never cached: pages show a person's data). */
    page(page: SafeHtml, statusCode?: number): FastifyReply;
  }
}

/** Client errors fastify raises itself, as sentences that say what to do. */
const frameworkMessages: Record<number, { title: string; message: string }> = {
  400: { title: 'Request not understood', message: 'This request could not be read. Reload the page and try again.' },
  413: { title: 'Form too large', message: 'What you sent is too large. Shorten it and try again.' },
  414: { title: 'Address too long', message: 'This address is too long. Check the link and try again.' },
  415: { title: 'Form not understood', message: 'This address accepts only its own forms. Reload the page and try again.' },
};

const internalError = new UserFacingError(500, 'Something went wrong', 'Something went wrong on our side. Try again; if it keeps happening, tell your administrator.');
export const notFoundError = (): UserFacingError =>
  new UserFacingError(404, 'Page not found', 'There is no page at this address. Check the link, or go back to the start.');

/** A minimal viewer for error pages (the header's email and sign-out, no workspace switcher). */
export type ErrorViewer = (request: FastifyRequest) => Viewer | undefined;

/**
 * Every failure is a page: a title and a sentence saying what to do, with the right status.
 * Internal details of 5xx are logged, never shown.
 */
async function errorsPlugin(app: FastifyInstance): Promise<void> {
  app.decorateReply('page', function (this: FastifyReply, page: SafeHtml, statusCode?: number) {
    if (statusCode !== undefined) this.code(statusCode);
    return this.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(page.toString());
  });

  const render = (request: FastifyRequest, reply: FastifyReply, error: UserFacingError): FastifyReply => {
    const viewer = request.viewerForErrors?.();
    return reply
      .headers(error.headers)
      .page(errorPage({ title: error.title, message: error.message, viewer, signInAgain: error.statusCode === 403 && !viewer }), error.statusCode);
  };

  app.setNotFoundHandler((request, reply) => render(request, reply, notFoundError()));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof UserFacingError) {
      if (error.statusCode >= 500) request.log.warn({ err: error.cause ?? error, status: error.statusCode }, error.title);
      return render(request, reply, error);
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      return render(request, reply, new UserFacingError(400, 'Address not understood', 'Part of this address is not valid. Check the link, or start again from the start page.'));
    }
    const statusCode = error.statusCode ?? 500;
    if (statusCode >= 500) {
      request.log.error({ err: error }, 'unhandled error');
      return render(request, reply, internalError);
    }
    const known = frameworkMessages[statusCode] ?? frameworkMessages[400]!;
    return render(request, reply, new UserFacingError(statusCode, known.title, known.message));
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the session plugin: the signed-in person for an error page's header, if any. */
    viewerForErrors?: () => Viewer | undefined;
  }
}

/** fastify's `frameworkErrors` (before routing: a bad percent-encoding, a path parameter too long). */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const known = frameworkMessages[statusCode] ?? frameworkMessages[400]!;
  void reply.code(statusCode).type('text/html; charset=utf-8').send(errorPage(known).toString());
}

/** The HTTP server's `clientError`: a request node's parser refused, answered on the raw socket. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let statusCode = 400;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') statusCode = 408;
  else if (error.code === 'HPE_HEADER_OVERFLOW') statusCode = 431;
  const body = `${STATUS_CODES[statusCode]}: the request could not be read. ${sentences.tryAgainLater}\n`;
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroySoon();
}

export default fp(errorsPlugin, { name: 'errors' });
