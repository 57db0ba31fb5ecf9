// Portal mode's session: the portal token from the link's fragment, kept in session storage only.
import { ApiError, request, Session } from './api';

const PORTAL_TOKEN_KEY = 'hookbase.portal-token';

/**
 * Moves a token in the address's fragment (`#token=…`) to session storage and removes it from the
 * address bar and the history entry. Browsers never send a fragment, so it reached no server.
 */
export function takePortalToken(): void {
  const fragment = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const token = fragment.get('token');
  if (!token) return;
  sessionStorage.setItem(PORTAL_TOKEN_KEY, token);
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
}

export interface PortalSession {
  session: Session;
  application: { id: string; uid: string | null; name: string };
  readOnly: boolean;
  branding: { displayName: string; logoUrl: string | null; primaryColor: string | null };
}

/** What the token may see, read from the server: its organization, application and branding. */
export async function loadPortalSession(organizationId: string): Promise<PortalSession> {
  const token = sessionStorage.getItem(PORTAL_TOKEN_KEY);
  if (!token) throw new Error('Open this portal with the link you were given.');
  let data: {
    organizationId: string;
    application: PortalSession['application'];
    plan: string;
    readOnly: boolean;
    branding: PortalSession['branding'];
  };
  try {
    ({ data } = await request<typeof data>('GET', '/api/portal/session', token));
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 404))
      throw new Error('This portal link has expired or was revoked. Ask for a new one.');
    throw error;
  }
  if (data.organizationId !== organizationId)
    throw new Error('This portal link belongs to another organization.');
  return {
    session: {
      apiKey: token,
      organizationId,
      organizationName: data.branding.displayName,
      plan: data.plan,
    },
    application: data.application,
    readOnly: data.readOnly,
    branding: data.branding,
  };
}
