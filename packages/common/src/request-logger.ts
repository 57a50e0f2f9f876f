import { levels, type Bindings, type ChildLoggerOptions, type LevelWithSilentOrString, type LogFn } from 'pino';

/**
 * The per-request logger of an HTTP edge (fastify's `childLoggerFactory`), made when a line is first
 * written for the request, not for every request. fastify's default makes a pino child binding the
 * request id on each request; pino serializes the bindings (through the redaction paths) at once:
 * ~1.5 % of the gateway's CPU in a GET run, where one request in a hundred writes a line (the
 * sampled access line). Lines read the same: the child is the one fastify would have made.
 */

type LineLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** What fastify asks of a request's logger (its `FastifyBaseLogger`), structurally. */
export interface RequestLogger {
  level: LevelWithSilentOrString;
  fatal: LogFn;
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  trace: LogFn;
  silent: LogFn;
  child(bindings: Bindings, options?: ChildLoggerOptions): RequestLogger;
}

/** The service's logger, as fastify hands it to the factory. */
export interface ParentLogger {
  level: LevelWithSilentOrString;
  child(bindings: Bindings, options?: ChildLoggerOptions): RequestLogger;
}

class LazyChildLogger implements RequestLogger {
  private made: RequestLogger | undefined;

  constructor(
    private readonly parent: ParentLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): RequestLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): LevelWithSilentOrString {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.logger.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): RequestLogger {
    return this.logger.child(bindings, options);
  }

  /** Writes through the child, made now unless the line's level is off (then nothing is made). */
  line(level: LineLevel, args: unknown[]): void {
    if (this.made === undefined && !(levels.values[level]! >= (levels.values[this.parent.level] ?? Infinity))) return;
    (this.logger[level] as (...line: unknown[]) => void)(...args);
  }

  declare fatal: LogFn;
  declare error: LogFn;
  declare warn: LogFn;
  declare info: LogFn;
  declare debug: LogFn;
  declare trace: LogFn;
  declare silent: LogFn;
}

for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) {
  LazyChildLogger.prototype[level] = function (this: LazyChildLogger, ...args: unknown[]): void {
    this.line(level, args);
  } as LogFn;
}
LazyChildLogger.prototype.silent = (() => undefined) as LogFn;

/** fastify's `childLoggerFactory` option for a service's pino logger (the request id is the bindings). */
export function lazyChildLoggerFactory(logger: ParentLogger, bindings: Bindings, options: ChildLoggerOptions): RequestLogger {
  return new LazyChildLogger(logger, bindings, options);
}
