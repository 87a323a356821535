/**
 * Load shedding (src/rest/load-shedding.ts): over MAX_EVENT_LOOP_DELAY_MS requests are answered 503
 * `service_overloaded` with Retry-After before any work; and a sampler that throws (as
 * `process.memoryUsage()` did under a descriptor shortage, from a timer nothing caught) is reported
 * once, keeps the last value it read, and never ends the process: an uncaught error here would
 * fail this file.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { installLoadShedding, startSampler } from '../../src/rest/load-shedding.ts';

const waitFor = async (condition: () => boolean) => {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
};

let app: FastifyInstance | null = null;
afterEach(async () => {
  await app?.close();
  app = null;
});

/** An app with one route, shedding over 100 ms of delay as `read` reports it, sampled every 5 ms. */
async function appReading(read: () => number, logged: unknown[]) {
  const instance = Fastify({
    logger: {
      level: 'error',
      stream: {
        write: (line: string) => {
          logged.push(JSON.parse(line));
        },
      },
    },
  });
  installLoadShedding(instance, { maxEventLoopDelayMs: 100, read, sampleEveryMs: 5 });
  instance.get('/work', async () => ({ done: true }));
  // A route whose own 503 answer has another shape (as the MCP Registry routes' does).
  const strict503 = { type: 'object', required: ['error'], properties: { error: { type: 'string' } } };
  instance.get('/strict', { schema: { response: { 503: strict503 } } }, async () => ({ done: true }));
  await instance.ready();
  app = instance;
  return instance;
}

describe('load shedding', () => {
  it('sheds with 503 service_overloaded and Retry-After while the delay read is over the limit', async () => {
    let delay = 0;
    let reads = 0;
    const shedding = await appReading(() => {
      reads++;
      return delay;
    }, []);
    expect((await shedding.inject({ method: 'GET', url: '/work' })).statusCode).toBe(200);
    delay = 250;
    const after = reads;
    await waitFor(() => reads > after);
    const res = await shedding.inject({ method: 'GET', url: '/work' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toMatchObject({ code: 'service_overloaded', status: 503 });
    expect(res.json().detail).toBe('the service is overloaded (eventLoopDelay 250); retry later');
    // Sent as it is, whatever the route's own answer schema says (not a 500 from its serializer).
    const strict = await shedding.inject({ method: 'GET', url: '/strict' });
    expect(strict.statusCode).toBe(503);
    expect(strict.json()).toMatchObject({ code: 'service_overloaded', status: 503 });
  });

  it('a sampler that throws is reported once, keeps its last value, and the process goes on', async () => {
    let failing = false;
    let delay = 0;
    let reads = 0;
    const logged: { msg?: string; err?: { message?: string } }[] = [];
    const shedding = await appReading(() => {
      reads++;
      if (failing) throw new Error('EMFILE: too many open files, uv_resident_set_memory');
      return delay;
    }, logged);
    delay = 250;
    let after = reads;
    await waitFor(() => reads > after);
    failing = true;
    after = reads;
    // Many failed reads: each one a timer callback that would end the process if it threw out.
    await waitFor(() => reads > after + 20);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.msg).toBe('the load-shedding sampler failed; the last delay read stays in force');
    expect(logged[0]?.err?.message).toBe('EMFILE: too many open files, uv_resident_set_memory');
    expect((await shedding.inject({ method: 'GET', url: '/work' })).statusCode).toBe(503);

    // Recovered: its value is in force again, and a later failure is reported again.
    delay = 0;
    failing = false;
    after = reads;
    await waitFor(() => reads > after + 1);
    expect((await shedding.inject({ method: 'GET', url: '/work' })).statusCode).toBe(200);
    failing = true;
    await waitFor(() => logged.length === 2);
  });

  it('startSampler survives a report that throws too', async () => {
    let reads = 0;
    const sampler = startSampler(
      () => {
        reads++;
        throw new Error('read failed');
      },
      5,
      () => {
        throw new Error('report failed');
      },
    );
    await waitFor(() => reads >= 3);
    sampler.stop();
    expect(sampler.value()).toBe(0);
  });
});
