import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, type Logger } from './logger.js';
import { requestIdLogField } from './request-id.js';
import { lazyChildLoggerFactory } from './request-logger.js';

/** A service logger writing into `lines` (parsed, without the time). */
function capturingLogger(level: 'info' | 'debug' = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const { time: _time, ...line } = JSON.parse(chunk.toString('utf8')) as Record<string, unknown>;
      lines.push(line);
      done();
    },
  });
  return { logger: createLogger('test', level, destination), lines };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the per-request logger', () => {
  it('makes no child until a line is written, and then writes the line the eager child would', async () => {
    const { logger, lines } = capturingLogger();
    const child = vi.spyOn(logger, 'child');
    const lazy = lazyChildLoggerFactory(logger, { [requestIdLogField]: 'req-1' }, {});
    expect(child).not.toHaveBeenCalled();
    expect(lazy.level).toBe('info');

    lazy.info({ route: '/v1/tasks/:id', statusCode: 200 }, 'access');
    lazy.warn('twice');
    logger.child({ [requestIdLogField]: 'req-1' }).info({ route: '/v1/tasks/:id', statusCode: 200 }, 'access');
    await flush();
    expect(child).toHaveBeenCalledTimes(2); // once for the lazy logger (not per line), once above
    expect(lines[0]).toEqual({ level: 'info', service: 'test', reqId: 'req-1', route: '/v1/tasks/:id', statusCode: 200, msg: 'access' });
    expect(lines[1]).toMatchObject({ level: 'warn', reqId: 'req-1', msg: 'twice' });
    expect(lines[2]).toEqual(lines[0]);
  });

  it('makes no child for a line below the level, nor for silent', async () => {
    const { logger, lines } = capturingLogger('info');
    const child = vi.spyOn(logger, 'child');
    const lazy = lazyChildLoggerFactory(logger, { [requestIdLogField]: 'req-2' }, {});
    lazy.debug('not written');
    lazy.trace('not written');
    lazy.silent('not written');
    await flush();
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('redacts as the service logger does, and its children carry both bindings; a level set applies to its lines', async () => {
    const { logger, lines } = capturingLogger('info');
    const lazy = lazyChildLoggerFactory(logger, { [requestIdLogField]: 'req-3' }, {});
    lazy.child({ component: 'mcp' }).error({ webhook: { secret: 's3cr3t' } }, 'failed');
    lazy.level = 'debug';
    expect(lazy.level).toBe('debug');
    lazy.debug('now written');
    await flush();
    expect(lines).toEqual([
      { level: 'error', service: 'test', reqId: 'req-3', component: 'mcp', webhook: { secret: '[redacted]' }, msg: 'failed' },
      { level: 'debug', service: 'test', reqId: 'req-3', msg: 'now written' },
    ]);
  });
});
