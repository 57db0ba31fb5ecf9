import { ReactNode, StrictMode, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { clientFor, loadSession, saveSession, Session, whenUnauthorized } from './api';
import { navigate, useRoute, hrefOf, setBase } from './router';
import { SignIn } from './sign-in';
import { EndpointsPage } from './endpoints';
import { EndpointPage } from './endpoint-page';
import { MessagesPage, MessagePage } from './messages';
import { DlqPage } from './dlq';
import { EventTypesPage } from './event-types';
import { loadPortalSession, PortalSession, takePortalToken } from './portal';
import './styles.css';

/** The pages of a signed-in client, with the header around them (the organization's or a portal's). */
function Pages(props: {
  session: Session;
  header: (link: LinkTo) => ReactNode;
  /** A portal: one application's pages, the catalog read only. */
  portal?: boolean;
}) {
  const { session } = props;
  const route = useRoute();
  const client = useMemo(() => clientFor(session), [session]);
  const [path, query = ''] = route.split('?');
  const params = new URLSearchParams(query);
  const parts = path.split('/').filter(Boolean);
  let page;
  let current = 'endpoints';
  if (parts[0] === 'endpoints' && parts[1]) {
    page = <EndpointPage client={client} endpointId={parts[1]} plan={session.plan} />;
  } else if (parts[0] === 'messages' && parts[1]) {
    current = 'messages';
    page = <MessagePage client={client} messageId={parts[1]} />;
  } else if (parts[0] === 'messages') {
    current = 'messages';
    page = <MessagesPage client={client} params={params} />;
  } else if (parts[0] === 'event-types') {
    current = 'event-types';
    page = <EventTypesPage client={client} readOnlyCatalog={props.portal} />;
  } else if (parts[0] === 'dlq') {
    current = 'dlq';
    page = <DlqPage client={client} />;
  } else {
    page = <EndpointsPage client={client} session={session} />;
  }
  const link: LinkTo = (to, name, label) => (
    <a
      href={hrefOf(to)}
      aria-current={current === name ? 'page' : undefined}
      onClick={(event) => {
        event.preventDefault();
        navigate(to);
      }}
    >
      {label}
    </a>
  );
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      {props.header(link)}
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

type LinkTo = (to: string, name: string, label: string) => ReactNode;

const nav = (link: LinkTo) => (
  <nav aria-label="Main">
    {link('/', 'endpoints', 'Endpoints')}
    {link('/messages', 'messages', 'Message log')}
    {link('/event-types', 'event-types', 'Event types')}
    {link('/dlq', 'dlq', 'DLQ')}
  </nav>
);

function App() {
  const [session, setSession] = useState<Session | null>(loadSession());
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    whenUnauthorized(() => {
      saveSession(null);
      setSession(null);
      setNotice('Your API key was refused (revoked or expired). Sign in again with a valid key.');
      navigate('/');
    });
  }, []);

  if (!session) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(next) => {
          saveSession(next);
          setNotice(null);
          setSession(next);
          navigate('/');
        }}
      />
    );
  }
  return (
    <Pages
      session={session}
      header={(link) => (
        <header className="top">
          <span className="brand">Hookbase</span>
          {nav(link)}
          <span className="org" title={session.organizationId}>
            {session.organizationName} <span className="plan">({session.plan} plan)</span>
          </span>
          <button
            type="button"
            onClick={() => {
              saveSession(null);
              setSession(null);
              navigate('/');
            }}
          >
            Sign out
          </button>
        </header>
      )}
    />
  );
}

/**
 * Portal mode: one application's endpoints, message log and DLQ, opened with a portal token and
 * nothing of the organization. The token came in the link's fragment and is in session storage.
 */
function PortalApp(props: { organizationId: string }) {
  const [portal, setPortal] = useState<PortalSession | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    whenUnauthorized(() => {
      setPortal(null);
      setProblem('This portal link has expired or was revoked. Ask for a new one.');
    });
    loadPortalSession(props.organizationId).then(
      (loaded) => {
        if (loaded.branding.primaryColor)
          document.documentElement.style.setProperty('--accent', loaded.branding.primaryColor);
        document.title = `${loaded.branding.displayName}: ${loaded.application.name}`;
        setPortal(loaded);
      },
      (error: Error) => setProblem(error.message),
    );
  }, [props.organizationId]);

  if (problem) {
    return (
      <main id="main" className="portal-problem">
        <h1>Portal unavailable</h1>
        <p role="alert">{problem}</p>
      </main>
    );
  }
  if (!portal) return <p aria-busy="true">Loading…</p>;
  return (
    <Pages
      session={portal.session}
      portal
      header={(link) => (
        <header className="top">
          {portal.branding.logoUrl ? (
            <img className="logo" src={portal.branding.logoUrl} alt="" height={24} />
          ) : null}
          <span className="brand">{portal.branding.displayName}</span>
          {nav(link)}
          <span className="org" title={portal.application.id}>
            {portal.application.name}
            {portal.readOnly ? <span className="plan"> (read-only)</span> : null}
          </span>
        </header>
      )}
    />
  );
}

const PORTAL_PATH = /^\/dashboard\/portal\/(org_[0-9a-z]{26})(?:\/|$)/;
const portalOrganization = PORTAL_PATH.exec(window.location.pathname)?.[1];
if (portalOrganization) {
  setBase(`/dashboard/portal/${portalOrganization}`);
  // At once, before anything renders: the token leaves the address bar (and history).
  takePortalToken();
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    {portalOrganization ? <PortalApp organizationId={portalOrganization} /> : <App />}
  </StrictMode>,
);
