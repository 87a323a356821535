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
  // Headers typed in the editor win over the signed-in token.
  fetch: (input, init) =>
    fetch(input, { ...init, headers: { ...authHeaders(), ...(init?.headers as Record<string, string>) } }),
});

const root = document.getElementById('explorer');
if (root !== null) createRoot(root).render(<GraphiQL fetcher={fetcher} defaultEditorToolsVisibility="headers" />);
