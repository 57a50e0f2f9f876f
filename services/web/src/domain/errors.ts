/**
 * A failure a person is told about: its HTTP status, a short title and a sentence that says what
 * to do. The pages render it; the message never holds internal details.
 */
export class UserFacingError extends Error {
  override readonly name = 'UserFacingError';
  constructor(
    readonly statusCode: number,
    readonly title: string,
    /** A whole sentence (or two): what happened and what to do next. */
    message: string,
    readonly headers: Record<string, string> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export const sentences = {
  tryAgainLater: 'Try again in a minute; if it keeps failing, tell your administrator.',
  startAgain: 'Start again from the sign-in page.',
};
