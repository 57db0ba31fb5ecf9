import { FormEvent, useEffect, useState } from 'react';
import { Attempt, Client, Endpoint, Message } from './api';
import { STATUS_LABELS, statusLabel, time } from './format';
import { navigate, hrefOf } from './router';
import { Badge, ErrorBox, Field, statusTone } from './ui';

/** The message log: filters live in the URL (so a filtered view can be shared), cursor paging. */
export function MessagesPage(props: { client: Client; params: URLSearchParams }) {
  const { client, params } = props;
  const status = params.get('status') ?? '';
  const eventType = params.get('eventType') ?? '';
  const endpointId = params.get('endpointId') ?? '';
  const since = params.get('since') ?? '';
  const until = params.get('until') ?? '';
  const [form, setForm] = useState({ status, eventType, endpointId, since, until });
  const [endpoints, setEndpoints] = useState<Endpoint[]>([]);
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [cursors, setCursors] = useState<string[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = cursors[cursors.length - 1];

  useEffect(
    () => setForm({ status, eventType, endpointId, since, until }),
    [status, eventType, endpointId, since, until],
  );
  useEffect(() => {
    void client.get<Endpoint[]>('/webhook-endpoints').then(setEndpoints, () => undefined);
  }, [client]);
  useEffect(() => {
    const query = new URLSearchParams();
    if (status) query.set('status', status);
    if (eventType) query.set('eventType', eventType);
    if (endpointId) query.set('endpointId', endpointId);
    // The form's times are UTC wall-clock times; the API takes ISO 8601 instants.
    const createdAfter = utcInstant(since);
    const createdBefore = utcInstant(until);
    if (createdAfter) query.set('createdAfter', createdAfter);
    if (createdBefore) query.set('createdBefore', createdBefore);
    if (cursor) query.set('cursor', cursor);
    query.set('limit', '50');
    let cancelled = false;
    client.page<Message>(`/messages?${query.toString()}`).then(
      (page) => {
        if (cancelled) return;
        setMessages(page.data);
        setNext(page.nextCursor ?? null);
        setError(null);
      },
      (caught: unknown) => !cancelled && setError(caught),
    );
    return () => {
      cancelled = true;
    };
  }, [client, status, eventType, endpointId, since, until, cursor]);

  function apply(event: FormEvent) {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(form)) if (value) query.set(key, value);
    setCursors([]);
    const text = query.toString();
    navigate(`/messages${text ? `?${text}` : ''}`);
  }

  return (
    <section>
      <h1>Message log</h1>
      <form className="filters" onSubmit={apply} aria-label="Filter messages">
        <Field label="Status">
          {({ id }) => (
            <select
              id={id}
              value={form.status}
              onChange={(e) => setForm({ ...form, status: e.target.value })}
            >
              <option value="">Any status</option>
              {Object.entries(STATUS_LABELS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Event type">
          {({ id }) => (
            <input
              id={id}
              value={form.eventType}
              placeholder="order.created"
              onChange={(e) => setForm({ ...form, eventType: e.target.value })}
            />
          )}
        </Field>
        <Field label="Endpoint">
          {({ id }) => (
            <select
              id={id}
              value={form.endpointId}
              onChange={(e) => setForm({ ...form, endpointId: e.target.value })}
            >
              <option value="">Any endpoint</option>
              {endpoints.map((endpoint) => (
                <option key={endpoint.id} value={endpoint.id}>
                  {endpoint.url ?? endpoint.id}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Created since (UTC)">
          {({ id }) => (
            <input
              id={id}
              type="datetime-local"
              step="1"
              value={form.since}
              onChange={(e) => setForm({ ...form, since: e.target.value })}
            />
          )}
        </Field>
        <Field label="Created before (UTC)">
          {({ id }) => (
            <input
              id={id}
              type="datetime-local"
              step="1"
              value={form.until}
              onChange={(e) => setForm({ ...form, until: e.target.value })}
            />
          )}
        </Field>
        <button type="submit" className="primary">
          Apply filters
        </button>
      </form>
      <ErrorBox error={error} next="Change the filters or reload the page." />
      {messages?.length === 0 ? (
        <div className="empty">
          <p>No messages match these filters.</p>
          <p>Clear a filter, or publish an event (POST /v1/events) to an endpoint that takes it.</p>
        </div>
      ) : null}
      {messages && messages.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Messages</caption>
            <thead>
              <tr>
                <th scope="col">Message</th>
                <th scope="col">Event type</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Created</th>
                <th scope="col">Last response</th>
              </tr>
            </thead>
            <tbody>
              {messages.map((message) => (
                <tr key={message.id}>
                  <td>
                    <a
                      href={hrefOf(`/messages/${message.id}`)}
                      onClick={(event) => {
                        event.preventDefault();
                        navigate(`/messages/${message.id}`);
                      }}
                    >
                      {message.id}
                    </a>
                  </td>
                  <td>{message.eventType}</td>
                  <td>
                    <Badge tone={statusTone(message.status)}>{statusLabel(message.status)}</Badge>
                  </td>
                  <td>{message.attempts}</td>
                  <td>{time(message.createdAt)}</td>
                  <td className="wrap">
                    {message.lastResponseStatus ?? '—'} {message.lastError ?? ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <div className="pager">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Newer
        </button>
        <button
          type="button"
          disabled={!next}
          onClick={() => next && setCursors([...cursors, next])}
        >
          Older
        </button>
      </div>
    </section>
  );
}

/** A `datetime-local` value read as UTC, as an ISO 8601 instant; nothing when empty or invalid. */
function utcInstant(local: string): string | undefined {
  if (!local) return undefined;
  const millis = Date.parse(`${local}Z`);
  return Number.isNaN(millis) ? undefined : new Date(millis).toISOString();
}

interface MessageDetail extends Message {
  attemptHistory: Attempt[];
}

export function MessagePage(props: { client: Client; messageId: string }) {
  const { client, messageId } = props;
  const [message, setMessage] = useState<MessageDetail | null>(null);
  const [payload, setPayload] = useState<unknown>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    client.get<MessageDetail>(`/messages/${encodeURIComponent(messageId)}`).then(
      async (loaded) => {
        if (cancelled) return;
        setMessage(loaded);
        const event = await client.get<{ payload: unknown }>(`/events/${loaded.eventId}`);
        if (!cancelled) setPayload(event.payload);
      },
      (caught: unknown) => !cancelled && setError(caught),
    );
    return () => {
      cancelled = true;
    };
  }, [client, messageId]);

  async function replay() {
    setError(null);
    try {
      const copy = await client.post<{ id?: string; messageId?: string }>(
        `/messages/${encodeURIComponent(messageId)}/replay`,
      );
      setNotice(`Replayed as ${copy?.id ?? copy?.messageId ?? 'a new message'}.`);
    } catch (caught) {
      setError(caught);
    }
  }

  return (
    <section>
      <p>
        <a
          href={hrefOf('/messages')}
          onClick={(event) => {
            event.preventDefault();
            navigate('/messages');
          }}
        >
          ← Message log
        </a>
      </p>
      <h1>Message {messageId}</h1>
      <ErrorBox error={error} next="Check the message id, or go back to the log." />
      {message ? (
        <>
          <dl className="facts">
            <div>
              <dt>Status</dt>
              <dd>
                <Badge tone={statusTone(message.status)}>{statusLabel(message.status)}</Badge>
              </dd>
            </div>
            <div>
              <dt>Event type</dt>
              <dd>{message.eventType}</dd>
            </div>
            <div>
              <dt>Endpoint</dt>
              <dd>
                <a
                  href={hrefOf(`/endpoints/${message.endpointId}`)}
                  onClick={(event) => {
                    event.preventDefault();
                    navigate(`/endpoints/${message.endpointId}`);
                  }}
                >
                  {message.endpointId}
                </a>
              </dd>
            </div>
            <div>
              <dt>Attempts</dt>
              <dd>
                {message.attempts} of {message.maxAttempts}
              </dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{time(message.createdAt)}</dd>
            </div>
          </dl>
          <div className="toolbar">
            <button type="button" onClick={() => void replay()}>
              Replay message
            </button>
          </div>
          {notice ? (
            <p className="notice" role="status">
              {notice}
            </p>
          ) : null}
          <h2>Payload</h2>
          <pre className="payload" tabIndex={0} aria-label="Event payload">
            {payload === undefined ? 'Loading…' : JSON.stringify(payload, null, 2)}
          </pre>
          <h2>Attempts</h2>
          {message.attemptHistory.length === 0 ? <p>No attempt yet.</p> : null}
          {message.attemptHistory.length > 0 ? (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Time</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Status</th>
                    <th scope="col">Latency</th>
                    <th scope="col">Response or error</th>
                  </tr>
                </thead>
                <tbody>
                  {message.attemptHistory.map((attempt) => (
                    <tr key={attempt.id}>
                      <td>{attempt.attempt}</td>
                      <td>{time(attempt.startedAt)}</td>
                      <td>{attempt.outcome}</td>
                      <td>{attempt.responseStatus ?? '—'}</td>
                      <td>{attempt.durationMs === null ? '—' : `${attempt.durationMs} ms`}</td>
                      <td className="wrap">{attempt.responseExcerpt ?? attempt.error ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
