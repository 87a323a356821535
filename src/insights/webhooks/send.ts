/**
 * One attempt of a webhook: check and resolve the target (target.ts), then POST the body to the
 * address checked, whatever DNS answers meanwhile. Bounded: the wait for a lookup slot at the
 * lookup timeout or `timeoutMs`, whichever is shorter (then the attempt is `lookup_busy`: it never
 * started, nothing is said of the receiver); the lookup at the rules' timeout (lookup.ts); the
 * attempt from the lookup's start (resolving, connecting, sending, the response's status) at
 * `timeoutMs`; the body sent is at most MAX_BODY_BYTES, at most MAX_RESPONSE_BYTES of the answer
 * are read, redirects are not followed, and no connection is kept.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  resolveWebhookTarget,
  WebhookTargetRefused,
  type RefusalReason,
  type ResolvedTarget,
  type TargetLookup,
  type TargetRules,
} from './target.ts';

const MAX_BODY_BYTES = 64 * 1024;
const MAX_RESPONSE_BYTES = 1024;

/** `lookup_busy`: no lookup slot came free, nothing was sent (the worker puts it back, not counted). */
type AttemptFailure = 'status' | 'timeout' | 'network' | 'refused' | 'unresolved' | 'too_large' | 'lookup_busy';

export type Attempt = { ok: true; status: number } | { ok: false; failure: AttemptFailure; detail: string };

/** A lookup that answers the address checked, so the connection goes nowhere else. */
function pinned(target: ResolvedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all === true) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

function post(
  target: ResolvedTarget,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<Attempt> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      request.destroy();
      resolve(attempt);
    };
    const client = target.url.protocol === 'https:' ? https : http;
    const request = client.request(target.url, {
      method: 'POST',
      agent: false,
      lookup: pinned(target),
      signal,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'agent-skill-gateway-webhooks/1',
      },
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let read = 0;
      const finish = () => {
        const text = Buffer.concat(chunks).toString('utf8').slice(0, MAX_RESPONSE_BYTES);
        done(
          status >= 200 && status < 300
            ? { ok: true, status }
            : { ok: false, failure: 'status', detail: `answered ${status}${text === '' ? '' : `: ${text}`}` },
        );
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        read += chunk.length;
        if (read >= MAX_RESPONSE_BYTES) finish();
      });
      response.on('end', finish);
      // The deadline, or the receiver closing, while the answer's body comes: its status stands.
      response.on('error', finish);
      response.on('close', finish);
    });
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (signal.aborted) done({ ok: false, failure: 'timeout', detail: 'no answer within the timeout' });
      else done({ ok: false, failure: 'network', detail: `${err.code ?? 'error'}: ${err.message}` });
    });
    request.end(body);
  });
}

/** The timeout, from `arm()` on, as a promise that rejects and the signal that aborts the request. */
function deadline(timeoutMs: number): { signal: AbortSignal; expired: Promise<never>; arm: () => void; clear(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let expire: (err: Error) => void = () => undefined;
  const expired = new Promise<never>((_, reject) => (expire = reject));
  expired.catch(() => undefined);
  return {
    signal: controller.signal,
    expired,
    arm: () => {
      timer ??= setTimeout(() => {
        controller.abort();
        expire(new Error('timeout'));
      }, timeoutMs);
    },
    clear: () => clearTimeout(timer),
  };
}

const REASONS: Record<RefusalReason, AttemptFailure> = {
  unresolved: 'unresolved',
  busy: 'lookup_busy',
  private_address: 'refused',
  invalid_url: 'refused',
};

/**
 * One POST of `body` to `url`, its host looked up for `lookup.org`; never throws: the outcome says
 * what happened.
 */
export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { rules: TargetRules; timeoutMs: number; lookup: TargetLookup },
): Promise<Attempt> {
  if (Buffer.byteLength(body) > MAX_BODY_BYTES)
    return { ok: false, failure: 'too_large', detail: `the body is larger than ${MAX_BODY_BYTES} bytes` };
  const { rules, timeoutMs } = options;
  const bound = deadline(timeoutMs);
  try {
    const lookup: TargetLookup = {
      ...options.lookup,
      waitMs: Math.min(rules.lookupTimeoutMs, timeoutMs),
      started: bound.arm,
    };
    const target = await Promise.race([resolveWebhookTarget(url, rules, lookup), bound.expired]);
    // An address the URL gives is not looked up: the attempt's time starts now.
    bound.arm();
    return await post(target, headers, body, bound.signal);
  } catch (err) {
    if (err instanceof WebhookTargetRefused)
      // For the service's log (worker.ts): what the resolver answered, which subscribers are never shown.
      return { ok: false, failure: REASONS[err.reason], detail: err.detail };
    if (bound.signal.aborted) return { ok: false, failure: 'timeout', detail: 'no answer within the timeout' };
    return { ok: false, failure: 'network', detail: String(err) };
  } finally {
    bound.clear();
  }
}
