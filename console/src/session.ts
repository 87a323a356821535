/**
 * The console's credential: a token or API key the user gives, kept in sessionStorage (this tab
 * only, gone when it closes). A development start-up link carries a fresh token in the URL
 * fragment (`/console#token=…`), which browsers never send to the server; it is taken from there
 * once and removed from the address bar.
 */
const KEY = 'gateway.token';

/**
 * Moves a `#token=…` fragment into sessionStorage and out of the address bar. A tab already signed
 * in with another token asks first: a link must not silently switch the user to someone else.
 */
export function adoptFragmentToken(): void {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  if (token === null || token === '') return;
  const current = sessionStorage.getItem(KEY);
  if (current === null || current === token || confirm('This link signs you in with another credential. Switch to it?'))
    sessionStorage.setItem(KEY, token);
  params.delete('token');
  const rest = params.toString();
  history.replaceState(null, '', `${location.pathname}${location.search}${rest === '' ? '' : `#${rest}`}`);
}

export function currentToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function signIn(token: string): void {
  sessionStorage.setItem(KEY, token.trim().replace(/^Bearer\s+/i, ''));
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
}

/** `Authorization` for the API, when signed in. */
export function authHeaders(): Record<string, string> {
  const token = currentToken();
  return token === null ? {} : { authorization: `Bearer ${token}` };
}
