import { FormEvent, useCallback, useEffect, useState } from 'react';
import { Client, Endpoint, EndpointStats, FifoState } from './api';
import { DeliveryChart } from './chart';
import { EndpointDialog, target } from './endpoints';
import { blockedReasonText, duration, statusLabel, time } from './format';
import { useLiveRefresh } from './live';
import { navigate, hrefOf } from './router';
import { Badge, Dialog, ErrorBox, Field, statusTone } from './ui';

export function EndpointPage(props: { client: Client; endpointId: string; plan: string }) {
  const { client, endpointId } = props;
  const path = `/webhook-endpoints/${encodeURIComponent(endpointId)}`;
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [fifo, setFifo] = useState<FifoState | null>(null);
  const [stats, setStats] = useState<EndpointStats | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);

  const refresh = useCallback(async () => {
    try {
      const [loaded, state, statistics] = await Promise.all([
        client.get<Endpoint>(path),
        client.get<FifoState>(`${path}/fifo-state`),
        client.get<EndpointStats>(`${path}/stats`),
      ]);
      setEndpoint(loaded);
      setFifo(state);
      setStats(statistics);
      setError(null);
    } catch (caught) {
      setError(caught);
    }
  }, [client, path]);
  useLiveRefresh(refresh, 3000);

  async function act(label: string, run: () => Promise<unknown>) {
    setActionError(null);
    setNotice(null);
    try {
      await run();
      setNotice(label);
      await refresh();
    } catch (caught) {
      setActionError(caught);
    }
  }
  const setStatus = (status: string, label: string) =>
    act(label, () => client.patch(path, { status }));

  if (!endpoint) {
    return (
      <section>
        <h1>Endpoint</h1>
        <ErrorBox error={error} next="Go back to the endpoints list and pick one that exists." />
        {!error ? <p>Loading…</p> : null}
      </section>
    );
  }
  return (
    <section>
      <p>
        <a
          href={hrefOf('/')}
          onClick={(event) => {
            event.preventDefault();
            navigate('/');
          }}
        >
          ← Endpoints
        </a>
      </p>
      <div className="page-head">
        <h1 className="wrap">{target(endpoint)}</h1>
        <Badge tone={statusTone(endpoint.status)}>{endpoint.status}</Badge>
        {endpoint.fifoEnabled ? <Badge>FIFO</Badge> : null}
      </div>
      <p className="hint">
        {endpoint.kind} endpoint {endpoint.id}
        {endpoint.eventTypes.length
          ? ` · event types: ${endpoint.eventTypes.join(', ')}`
          : ' · every event type'}
      </p>
      <div className="toolbar" role="group" aria-label="Endpoint actions">
        <button type="button" onClick={() => setEditing(true)}>
          Edit
        </button>
        {endpoint.status === 'active' ? (
          <button type="button" onClick={() => setStatus('paused', 'Paused.')}>
            Pause
          </button>
        ) : null}
        {endpoint.status === 'paused' ? (
          <button type="button" onClick={() => setStatus('active', 'Resumed.')}>
            Resume
          </button>
        ) : null}
        {endpoint.status !== 'disabled' ? (
          <button type="button" onClick={() => setStatus('disabled', 'Disabled.')}>
            Disable
          </button>
        ) : (
          <button type="button" onClick={() => setStatus('active', 'Enabled.')}>
            Enable
          </button>
        )}
        <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
          Delete
        </button>
      </div>
      {notice ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorBox error={actionError} />
      <ErrorBox error={error} next="The page keeps retrying every few seconds." />

      <HealthPanel endpoint={endpoint} />

      {fifo ? <QueuePanel fifo={fifo} /> : null}

      <h2>Last hour</h2>
      {stats ? <DeliveryChart stats={stats} /> : <p>Loading…</p>}

      {endpoint.kind === 'http' ? <SecretPanel client={client} path={path} /> : null}

      <ReplayFailed client={client} path={path} />

      <h2>Recent attempts</h2>
      {stats && stats.recentAttempts.length === 0 ? (
        <p className="empty">No attempts yet. Publish an event of a type this endpoint takes.</p>
      ) : null}
      {stats && stats.recentAttempts.length > 0 ? (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Message</th>
                <th scope="col">Attempt</th>
                <th scope="col">Outcome</th>
                <th scope="col">Response</th>
                <th scope="col">Latency</th>
              </tr>
            </thead>
            <tbody>
              {stats.recentAttempts.map((attempt) => (
                <tr key={attempt.id}>
                  <td>{time(attempt.startedAt)}</td>
                  <td>
                    <a
                      href={hrefOf(`/messages/${attempt.messageId}`)}
                      onClick={(event) => {
                        event.preventDefault();
                        navigate(`/messages/${attempt.messageId}`);
                      }}
                    >
                      {attempt.messageId}
                    </a>
                  </td>
                  <td>{attempt.attempt}</td>
                  <td>{attempt.outcome}</td>
                  <td className="wrap">
                    {attempt.responseStatus ?? '—'} {attempt.responseExcerpt ?? attempt.error ?? ''}
                  </td>
                  <td>{attempt.durationMs === null ? '—' : `${attempt.durationMs} ms`}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}

      {editing ? (
        <EndpointDialog
          client={client}
          plan={props.plan}
          endpoint={endpoint}
          onClose={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            void refresh();
          }}
        />
      ) : null}
      {confirmDelete ? (
        <Dialog title="Delete this endpoint?" onClose={() => setConfirmDelete(false)}>
          <p>
            {target(endpoint)} stops receiving events. Messages still queued for it go to the DLQ
            (reason endpoint_deleted). This cannot be undone.
          </p>
          <div className="actions">
            <button type="button" onClick={() => setConfirmDelete(false)}>
              Keep it
            </button>
            <button
              type="button"
              className="danger"
              onClick={() =>
                void client.del(path).then(
                  () => navigate('/'),
                  (caught: unknown) => {
                    setConfirmDelete(false);
                    setActionError(caught);
                  },
                )
              }
            >
              Delete endpoint
            </button>
          </div>
        </Dialog>
      ) : null}
    </section>
  );
}

function QueuePanel(props: { fifo: FifoState }) {
  const { fifo } = props;
  return (
    <section className="card" aria-labelledby="queue-title">
      <h2 id="queue-title">Queue</h2>
      {!fifo.fifoEnabled && fifo.queueDepth === 0 ? (
        <p className="hint">FIFO ordering is off: messages are delivered independently.</p>
      ) : null}
      <dl className="facts">
        <div>
          <dt>State</dt>
          <dd data-testid="queue-state">
            <Badge tone={fifo.blocked ? 'bad' : fifo.state === 'idle' ? 'good' : 'info'}>
              {fifo.blocked ? 'blocked' : fifo.state}
            </Badge>
          </dd>
        </div>
        <div>
          <dt>Depth</dt>
          <dd data-testid="queue-depth">{fifo.queueDepth}</dd>
        </div>
        <div>
          <dt>Waiting behind the head</dt>
          <dd>{fifo.waitingCount}</dd>
        </div>
        <div>
          <dt>Behind by</dt>
          <dd>{duration(fifo.lagSeconds)}</dd>
        </div>
      </dl>
      {fifo.blocked ? (
        <p className="blocked" data-testid="blocked-reason">
          Blocked: {blockedReasonText(fifo.blockedReason)} ({fifo.blockedReason})
        </p>
      ) : null}
      {fifo.head ? (
        <div>
          <h3>Head of the queue</h3>
          <dl className="facts">
            <div>
              <dt>Message</dt>
              <dd>
                <a
                  href={hrefOf(`/messages/${fifo.head.messageId}`)}
                  onClick={(event) => {
                    event.preventDefault();
                    navigate(`/messages/${fifo.head!.messageId}`);
                  }}
                >
                  {fifo.head.messageId}
                </a>{' '}
                ({fifo.head.eventType})
              </dd>
            </div>
            <div>
              <dt>Status</dt>
              <dd>{statusLabel(fifo.head.status)}</dd>
            </div>
            <div>
              <dt>Attempts</dt>
              <dd>
                {fifo.head.attempts} of {fifo.head.maxAttempts}
              </dd>
            </div>
            <div>
              <dt>Next attempt</dt>
              <dd>{time(fifo.head.nextAttemptAt)}</dd>
            </div>
            <div>
              <dt>Last response</dt>
              <dd className="wrap">
                {fifo.head.lastResponseStatus ?? '—'} {fifo.head.lastError ?? ''}
              </dd>
            </div>
          </dl>
        </div>
      ) : (
        <p>The queue is empty.</p>
      )}
    </section>
  );
}

function SecretPanel(props: { client: Client; path: string }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [overlap, setOverlap] = useState('86400');
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => setSecret(null), [props.path]);

  async function reveal() {
    setError(null);
    try {
      setSecret((await props.client.get<{ key: string }>(`${props.path}/secret`)).key);
    } catch (caught) {
      setError(caught);
    }
  }
  async function rotate(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const seconds = Number(overlap);
      const rotated = await props.client.post<{ key: string }>(`${props.path}/secret/rotate`, {
        overlapSeconds: seconds,
      });
      setSecret(rotated.key);
      setMessage(
        `Secret rotated. The previous secret keeps signing alongside the new one for ${duration(seconds)}.`,
      );
    } catch (caught) {
      setError(caught);
    }
  }
  return (
    <section className="card" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      <p>
        <code data-testid="secret-value">{secret ?? 'whsec_••••••••••••••••'}</code>
      </p>
      <div className="toolbar">
        <button type="button" onClick={() => void (secret ? setSecret(null) : reveal())}>
          {secret ? 'Hide secret' : 'Reveal secret'}
        </button>
        <button
          type="button"
          onClick={async () => {
            const key =
              secret ?? (await props.client.get<{ key: string }>(`${props.path}/secret`)).key;
            try {
              await navigator.clipboard.writeText(key);
              setMessage('Secret copied to the clipboard.');
            } catch {
              setSecret(key);
              setMessage(
                'The browser refused the clipboard: the secret is shown, copy it by hand.',
              );
            }
          }}
        >
          Copy secret
        </button>
      </div>
      <form onSubmit={rotate} className="inline-form">
        <Field label="Overlap (seconds)" hint="How long the old secret still signs.">
          {({ id, describedBy }) => (
            <input
              id={id}
              aria-describedby={describedBy}
              type="number"
              min={0}
              value={overlap}
              onChange={(e) => setOverlap(e.target.value)}
            />
          )}
        </Field>
        <button type="submit">Rotate secret</button>
      </form>
      {message ? (
        <p className="notice" role="status">
          {message}
        </p>
      ) : null}
      <ErrorBox error={error} />
    </section>
  );
}

function ReplayFailed(props: { client: Client; path: string }) {
  const [since, setSince] = useState(() =>
    new Date(Date.now() - 3_600_000).toISOString().slice(0, 16),
  );
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const result = await props.client.post<{ replayed?: number; count?: number }>(
        `${props.path}/replay-failed`,
        { since: new Date(`${since}Z`).toISOString() },
      );
      const count = result?.replayed ?? result?.count;
      setMessage(count === undefined ? 'Replay started.' : `${count} failed message(s) replayed.`);
    } catch (caught) {
      setError(caught);
    }
  }
  return (
    <form onSubmit={submit} className="card inline-form" aria-labelledby="replay-title">
      <h2 id="replay-title">Replay failed messages</h2>
      <Field label="Failed since (UTC)">
        {({ id }) => (
          <input
            id={id}
            type="datetime-local"
            value={since}
            onChange={(e) => setSince(e.target.value)}
          />
        )}
      </Field>
      <button type="submit">Replay failed</button>
      {message ? (
        <p className="notice" role="status">
          {message}
        </p>
      ) : null}
      <ErrorBox error={error} />
    </form>
  );
}

/** The endpoint's failure streak, and why and since when it is disabled. */
function HealthPanel(props: { endpoint: Endpoint }) {
  const { endpoint } = props;
  const health = endpoint.health;
  const failing = (health?.consecutiveFailures ?? 0) > 0;
  return (
    <section className="card" aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      {endpoint.status === 'disabled' ? (
        <p className="blocked" data-testid="disabled-reason">
          {endpoint.disabledReason === 'failing'
            ? 'Disabled automatically: it only failed for the auto-disable period.'
            : endpoint.disabledReason === 'manual'
              ? 'Disabled by hand.'
              : 'Disabled.'}{' '}
          {endpoint.disabledAt ? `Since ${time(endpoint.disabledAt)}.` : ''} Enable it to deliver
          again; its held messages follow.
        </p>
      ) : null}
      <dl className="facts">
        <div>
          <dt>State</dt>
          <dd data-testid="health-state">
            <Badge tone={failing ? 'bad' : 'good'}>{failing ? 'failing' : 'healthy'}</Badge>
          </dd>
        </div>
        <div>
          <dt>Failed attempts in a row</dt>
          <dd data-testid="health-failures">{health?.consecutiveFailures ?? 0}</dd>
        </div>
        <div>
          <dt>Failing since</dt>
          <dd>{time(health?.failingSince)}</dd>
        </div>
        <div>
          <dt>Last success</dt>
          <dd>{time(health?.lastSuccessAt)}</dd>
        </div>
      </dl>
    </section>
  );
}
