import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
type Level = FastifyBaseLogger['level'];

/**
 * A request's logger (`request.log`) that becomes pino's child logger when first used. Fastify
 * makes a child per request to bind its `reqId`; pino builds the child's bindings through its
 * redaction, which cost about a microsecond and 1.6 KiB per request, while most requests log
 * nothing through it: their one line is the request log's (request-log.ts), which binds the id
 * itself. Requests that do log (a 4xx, an error, a stream that ended) get the same line as from
 * pino's own child.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  #logger: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  #child(): FastifyBaseLogger {
    this.#logger ??= this.parent.child(this.bindings, this.options);
    return this.#logger;
  }

  get level(): Level {
    return this.#logger?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: Level) {
    this.#child().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(...args: unknown[]): void {
    this.#log('silent', args);
  }

  #log(method: LogMethod, args: unknown[]): void {
    const logger = this.#child();
    (logger[method] as (...args: unknown[]) => void).apply(logger, args);
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#child().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: request loggers made on first use (LazyRequestLogger). */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}
