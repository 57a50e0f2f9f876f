import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '@tws/common';
import { EndpointHealth, merge, splitOutcomes, type HealthStore } from './endpoint-health.js';

function setUp(options: { disableAfterSeconds?: number; disable?: string[]; fail?: boolean } = {}) {
  const calls: Array<{ succeeded: string[]; failed: string[]; after: number }> = [];
  const store: HealthStore = {
    recordHealth: async (succeeded, failed, after) => {
      if (options.fail) throw new Error('database down');
      calls.push({ succeeded, failed, after });
      return (options.disable ?? []).filter((id) => failed.includes(id));
    },
  };
  const warn = vi.fn();
  const inc = vi.fn();
  const logger = { warn } as unknown as Logger;
  const health = new EndpointHealth({ store, disableAfterSeconds: options.disableAfterSeconds ?? 259_200, autoDisabled: { inc }, logger });
  return { health, calls, warn, inc };
}

describe('splitOutcomes', () => {
  it('any success ends the streak; a batch ending in a failure starts one (an endpoint can be in both)', () => {
    const outcomes = new Map([
      ['ok', { anySucceeded: true, lastSucceeded: true }],
      ['down', { anySucceeded: false, lastSucceeded: false }],
      ['flaky', { anySucceeded: true, lastSucceeded: false }],
    ]);
    expect(splitOutcomes(outcomes)).toEqual({ succeeded: ['ok', 'flaky'], failed: ['down', 'flaky'] });
  });

  it('merge keeps an older success and the newer last outcome', () => {
    expect(merge({ anySucceeded: true, lastSucceeded: true }, { anySucceeded: false, lastSucceeded: false })).toEqual({ anySucceeded: true, lastSucceeded: false });
    expect(merge({ anySucceeded: false, lastSucceeded: false }, undefined)).toEqual({ anySucceeded: false, lastSucceeded: false });
  });
});

describe('EndpointHealth', () => {
  it('writes one batch per flush: alternating outcomes never count as an unbroken failure streak', async () => {
    const { health, calls } = setUp();
    for (const ok of [false, true, false]) health.observe('flaky', ok);
    health.observe('down', false);
    health.observe('down', false);
    health.observe('up', true);
    expect(health.size).toBe(3);
    await health.flush();
    expect(calls).toEqual([{ succeeded: ['flaky', 'up'], failed: ['flaky', 'down'], after: 259_200 }]);
    expect(health.size).toBe(0);
    await health.flush();
    expect(calls).toHaveLength(1);
  });

  it('warns with the endpoint id and counts each disabled endpoint', async () => {
    const { health, warn, inc } = setUp({ disable: ['down'] });
    health.observe('down', false);
    health.observe('up', true);
    expect(await health.flush()).toEqual(['down']);
    expect(inc).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toEqual({ endpointId: 'down', disabledReason: 'failing', afterSeconds: 259_200 });
  });

  it('keeps the outcomes for the next flush when the write fails, newer ones winning', async () => {
    const failing = setUp({ fail: true });
    failing.health.observe('a', true);
    await expect(failing.health.flush()).rejects.toThrow('database down');
    expect(failing.health.size).toBe(1);
  });

  it('records nothing when auto-disable is off (0)', async () => {
    const { health, calls } = setUp({ disableAfterSeconds: 0 });
    health.observe('down', false);
    expect(health.size).toBe(0);
    await health.flush();
    expect(calls).toEqual([]);
  });
});
