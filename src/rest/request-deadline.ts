/**
 * The deadline of every request (DESIGN §7): REQUEST_TIMEOUT_MS after it starts, the client gets
 * 504 `request_timeout` and the store work is cancelled through the context's signal.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toProblem } from '../errors.ts';
import { timeoutError, type Deadline } from '../shared/deadline.ts';

declare module 'fastify' {
  interface FastifyRequest {
    deadline: Deadline | null;
  }
}

/**
 * Starts the deadline of a request: at `timeoutMs` the signal aborts (stores cancel their work)
 * and, unless a response is already on its way or the request's write has begun, the client gets
 * 504 request_timeout. Work that holds the event loop past the deadline cannot be interrupted by
 * the timer: handlers check `Deadline.at` between steps, and the answer is checked once more
 * before it is serialized.
 */
export function startDeadline(request: FastifyRequest, reply: FastifyReply, timeoutMs: number): Deadline {
  const controller = new AbortController();
  let writing = false;
  const deadline: Deadline = {
    signal: controller.signal,
    at: Date.now() + timeoutMs,
    timeoutMs,
    answerAfterWrite: () => {
      writing = true;
    },
  };
  request.deadline = deadline;
  const timer = setTimeout(() => {
    controller.abort(timeoutError(timeoutMs));
    // A write under way answers for itself once it has committed, or not (see Deadline).
    if (!writing && !reply.sent && !reply.raw.headersSent) {
      // Serialized here: the check before serializing would refuse this late answer again.
      reply
        .code(504)
        .type('application/problem+json')
        .send(JSON.stringify(toProblem(timeoutError(timeoutMs), request.id)));
    }
  }, timeoutMs);
  timer.unref();
  reply.raw.once('close', () => clearTimeout(timer));
  return deadline;
}

/** 504 request_timeout instead of a success built past the deadline, before it is serialized. */
function checkBeforeSerializing(request: FastifyRequest, reply: FastifyReply): void {
  const d = request.deadline;
  if (d !== null && reply.statusCode < 300 && (d.signal.aborted || Date.now() >= d.at)) throw timeoutError(d.timeoutMs);
}

/**
 * Every request gets a `deadline` (null until startDeadline runs for it), and a success built past
 * its deadline is answered 504 request_timeout instead of being serialized.
 */
export function installRequestDeadline(app: FastifyInstance): void {
  app.decorateRequest('deadline', null);
  app.addHook('preSerialization', async (request, reply, payload) => {
    checkBeforeSerializing(request, reply);
    return payload;
  });
}
