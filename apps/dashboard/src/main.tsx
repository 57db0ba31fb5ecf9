import { StrictMode, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { clientFor, loadSession, saveSession, Session, whenUnauthorized } from './api';
import { navigate, useRoute } from './router';
import { SignIn } from './sign-in';
import { EndpointsPage } from './endpoints';
import { EndpointPage } from './endpoint-page';
import { MessagesPage, MessagePage } from './messages';
import { DlqPage } from './dlq';
import { EventTypesPage } from './event-types';
import './styles.css';

function App() {
  const [session, setSession] = useState<Session | null>(loadSession());
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();

  useEffect(() => {
    whenUnauthorized(() => {
      saveSession(null);
      setSession(null);
      setNotice('Your API key was refused (revoked or expired). Sign in again with a valid key.');
      navigate('/');
    });
  }, []);

  const client = useMemo(() => (session ? clientFor(session) : null), [session]);

  if (!session || !client) {
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
    page = <EventTypesPage client={client} />;
  } else if (parts[0] === 'dlq') {
    current = 'dlq';
    page = <DlqPage client={client} />;
  } else {
    page = <EndpointsPage client={client} session={session} />;
  }
  const link = (to: string, name: string, label: string) => (
    <a
      href={`/dashboard${to}`}
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
      <header className="top">
        <span className="brand">Hookbase</span>
        <nav aria-label="Main">
          {link('/', 'endpoints', 'Endpoints')}
          {link('/messages', 'messages', 'Message log')}
          {link('/event-types', 'event-types', 'Event types')}
          {link('/dlq', 'dlq', 'DLQ')}
        </nav>
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
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
