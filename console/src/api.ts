/**
 * The console's only way to the service: the public GraphQL and REST API, with the signed-in
 * token. Failures come back as problems (REST problem+json, or a GraphQL error's code and message).
 */
import type { Problem } from './dom.ts';
import { authHeaders } from './session.ts';

export type Answer<T> = { data: T; problem?: undefined } | { data?: undefined; problem: Problem };

export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<Answer<T>> {
  let res: Response;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeaders() },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    return { problem: { title: 'The service cannot be reached' } };
  }
  const body = (await res.json()) as {
    data?: T | null;
    errors?: { message: string; extensions?: { code?: string; traceId?: string } }[];
  };
  const error = body.errors?.[0];
  if (error !== undefined) {
    const trace = error.extensions?.traceId;
    return {
      problem: {
        title: error.extensions?.code ?? 'error',
        detail: error.message,
        ...(trace !== undefined ? { trace_id: trace } : {}),
      },
    };
  }
  return body.data == null ? { problem: { title: `HTTP ${res.status}` } } : { data: body.data };
}

export async function rest<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer<T>> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: { ...authHeaders(), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    return { problem: { title: 'The service cannot be reached' } };
  }
  const json: unknown = await res.json();
  if (!res.ok) {
    const p = json as { code?: string; title?: string; detail?: string; trace_id?: string };
    return {
      problem: {
        title: p.title ?? `HTTP ${res.status}`,
        ...(p.detail !== undefined ? { detail: p.detail } : {}),
        ...(p.trace_id !== undefined ? { trace_id: p.trace_id } : {}),
      },
    };
  }
  return { data: json as T };
}
