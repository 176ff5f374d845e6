import { call as request } from './session.ts';

/** A toolset an app may be limited to (src/tools/toolsets.ts). */
export interface ToolsetChoice {
  name: string;
  description: string;
}

/** What the consent page shows: GET /oauth/interaction/:uid/details (src/accounts/oauth/consent.ts). */
export interface PendingAuthorization {
  uid: string;
  client: { id: string; name: string; redirectHost: string; localOnly: boolean; publishedBy?: string };
  toolsets: ToolsetChoice[];
  /** What the page offers checked: what the app asks for, with what its connection holds already. */
  suggested: { toolsets: string[]; readOnly: boolean; accountId?: string };
  /** The signed-in user's accounts; absent when signed out. */
  accounts?: { id: string; name: string; role: 'owner' | 'admin' | 'member'; mayConnect: boolean }[];
  /** The user's connection of this app already, which allowing changes. */
  connection?: { accountId: string; accountName: string; toolsets: string[]; readOnly: boolean };
}

/** The consent routes' requests: the console's own (session.ts), the CSRF token before the body. */
const call = <T>(method: string, path: string, csrfToken: string | undefined, body?: unknown): Promise<T> =>
  request<T>(method, path, body, csrfToken);

const base = (uid: string) => `/oauth/interaction/${encodeURIComponent(uid)}`;

/** The console's side of an app connecting to the MCP server through OAuth. */
export const oauth = {
  pending: (uid: string, csrfToken: string | undefined) =>
    call<PendingAuthorization>('GET', `${base(uid)}/details`, csrfToken),
  /** Allows the app; answers where the browser goes next (back to the app, through the authorization server). */
  allow: (uid: string, csrfToken: string, input: { accountId: string; toolsets: string[]; readOnly: boolean }) =>
    call<{ returnTo: string }>('POST', `${base(uid)}/confirm`, csrfToken, input),
  deny: (uid: string, csrfToken: string) => call<{ returnTo: string }>('POST', `${base(uid)}/abort`, csrfToken, {}),
};
