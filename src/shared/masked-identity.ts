/** An agent's credential as the API shows it to every reader of the agent. */
import type { Identity } from '../domain/types.ts';

export interface MaskedIdentity {
  client_id: string;
  credential_kind: Identity['credential_kind'];
  api_key?: string;
  expires_at?: string;
}

/** `api_key` never leaves the service: a fixed prefix plus its last four characters. */
export function maskIdentity(identity: Identity): MaskedIdentity {
  const out: MaskedIdentity = { client_id: identity.client_id, credential_kind: identity.credential_kind };
  if (identity.api_key_last4 !== undefined) out.api_key = `****${identity.api_key_last4}`;
  if (identity.expires_at !== undefined) out.expires_at = identity.expires_at;
  return out;
}
