/**
 * The GraphQL explorer (GraphiQL: editor with completion from the schema, docs, history, headers
 * and variables), bundled with its Monaco workers so that it needs no network beyond the service.
 * Its requests carry the console's token unless the headers editor sets `Authorization` itself.
 */
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { createRoot } from 'react-dom/client';
import { adoptFragmentToken, authHeaders } from './session.ts';
import 'graphiql/style.css';
import './explorer.css';
import './monaco-workers.ts';

adoptFragmentToken();

const fetcher = createGraphiQLFetcher({
  url: '/graphql',
  // An Authorization header typed in the editor wins over the signed-in token (names in any case).
  fetch: (input, init) => {
    const typed = (init?.headers ?? {}) as Record<string, string>;
    const own = Object.keys(typed).some((k) => k.toLowerCase() === 'authorization');
    return fetch(input, { ...init, headers: { ...(own ? {} : authHeaders()), ...typed } });
  },
});

const root = document.getElementById('explorer');
if (root !== null) createRoot(root).render(<GraphiQL fetcher={fetcher} defaultEditorToolsVisibility="headers" />);
