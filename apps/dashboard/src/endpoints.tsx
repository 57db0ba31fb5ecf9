import { FormEvent, useCallback, useEffect, useState } from 'react';
import { ApiError, Client, Endpoint, EndpointStats, EventType, Session } from './api';
import { fieldOf, fifoSwitchRule, parseDelays, parseHeaderLines, percent, time } from './format';
import { navigate, hrefOf } from './router';
import { Badge, Dialog, ErrorBox, Field, statusTone } from './ui';

const KINDS = ['http', 'sqs', 'sns', 'eventbridge', 'pubsub', 's3', 'polling'];
const CONFIG_HINTS: Record<string, string> = {
  sqs: '{"queueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/orders", "region": "us-east-1"}',
  sns: '{"topicArn": "arn:aws:sns:us-east-1:123456789012:orders", "region": "us-east-1"}',
  eventbridge: '{"eventBusName": "default", "region": "us-east-1"}',
  pubsub: '{"projectId": "my-project", "topic": "orders"}',
  s3: '{"bucket": "my-bucket", "region": "us-east-1"}',
};

/** Errors whose code names the field they are about, though they carry no issue list. */
const CODE_FIELDS: Record<string, string> = {
  PLAN_REQUIRED: 'fifoEnabled',
  INVALID_URL: 'url',
  URL_NOT_ALLOWED: 'url',
  FIFO_NOT_SUPPORTED: 'fifoEnabled',
  CREDENTIALS_REQUIRED: 'config',
  CREDENTIALS_TARGET_CHANGED: 'config',
  FILTER_INVALID: 'filter',
};

/** Receiver authentication the dialog sets; `keep` leaves the stored auth as it is. */
const AUTH_TYPES = ['none', 'basic', 'bearer', 'oauth2_client_credentials', 'mtls'] as const;
/** Auth fields the API takes only when filled in. */
const OPTIONAL_AUTH_FIELDS = new Set(['scope', 'audience']);
const AUTH_LABELS: Record<string, string> = {
  oauth2_client_credentials: 'OAuth2 client credentials',
  mtls: 'Client certificate (mTLS)',
};

export function target(endpoint: Endpoint): string {
  if (endpoint.kind === 'http') return endpoint.url ?? '';
  if (endpoint.kind === 'polling') return 'polled by the consumer';
  const config = endpoint.config ?? {};
  const first = ['queueUrl', 'topicArn', 'eventBusName', 'topic', 'bucket']
    .map((key) => config[key])
    .find((value) => typeof value === 'string');
  return typeof first === 'string' ? first : JSON.stringify(config);
}

export function EndpointsPage(props: { client: Client; session: Session }) {
  const { client, session } = props;
  const [endpoints, setEndpoints] = useState<Endpoint[] | null>(null);
  const [stats, setStats] = useState<Record<string, EndpointStats>>({});
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<Endpoint | 'new' | null>(null);

  const load = useCallback(async () => {
    try {
      const list = await client.get<Endpoint[]>('/webhook-endpoints');
      setEndpoints(list);
      setError(null);
      const entries = await Promise.all(
        list.map(async (endpoint) => {
          try {
            return [
              endpoint.id,
              await client.get<EndpointStats>(`/webhook-endpoints/${endpoint.id}/stats`),
            ] as const;
          } catch {
            return null;
          }
        }),
      );
      setStats(Object.fromEntries(entries.filter((entry) => entry !== null)));
    } catch (caught) {
      setError(caught);
    }
  }, [client]);

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <section>
      <div className="page-head">
        <h1>Endpoints</h1>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          Create endpoint
        </button>
      </div>
      <ErrorBox error={error} next="Reload the page; if it persists, check the server's log." />
      {endpoints === null && !error ? <p>Loading…</p> : null}
      {endpoints?.length === 0 ? (
        <div className="empty">
          <p>No endpoints yet.</p>
          <p>
            Create one to start receiving events: an HTTP URL, a cloud queue or topic, or polling.
          </p>
        </div>
      ) : null}
      {endpoints && endpoints.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Endpoints of {session.organizationName}</caption>
            <thead>
              <tr>
                <th scope="col">Target</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Ordering</th>
                <th scope="col">Success (1 h)</th>
                <th scope="col">Last attempt</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {endpoints.map((endpoint) => (
                <tr key={endpoint.id}>
                  <td className="wrap">
                    <a
                      href={hrefOf(`/endpoints/${endpoint.id}`)}
                      onClick={(event) => {
                        event.preventDefault();
                        navigate(`/endpoints/${endpoint.id}`);
                      }}
                    >
                      {target(endpoint)}
                    </a>
                    {endpoint.description ? (
                      <div className="hint">{endpoint.description}</div>
                    ) : null}
                  </td>
                  <td>{endpoint.kind}</td>
                  <td>
                    <Badge tone={statusTone(endpoint.status)}>{endpoint.status}</Badge>
                  </td>
                  <td>{endpoint.fifoEnabled ? <Badge tone="info">FIFO</Badge> : 'unordered'}</td>
                  <td>{percent(stats[endpoint.id]?.successRate ?? null)}</td>
                  <td>{time(stats[endpoint.id]?.lastAttemptAt)}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Edit ${target(endpoint)}`}
                      onClick={() => setEditing(endpoint)}
                    >
                      Edit
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {editing ? (
        <EndpointDialog
          client={client}
          plan={session.plan}
          endpoint={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void load();
          }}
        />
      ) : null}
    </section>
  );
}

/** Create Endpoint and Edit: every field, the FIFO switch, and the API's field errors in place. */
export function EndpointDialog(props: {
  client: Client;
  plan: string;
  endpoint: Endpoint | null;
  onClose: () => void;
  onSaved: (endpoint: Endpoint) => void;
}) {
  const existing = props.endpoint;
  const [kind, setKind] = useState(existing?.kind ?? 'http');
  const [url, setUrl] = useState(existing?.url ?? '');
  const [description, setDescription] = useState(existing?.description ?? '');
  const [config, setConfig] = useState(
    existing?.config && Object.keys(existing.config).length > 0
      ? JSON.stringify(existing.config, null, 2)
      : '',
  );
  const [configChanged, setConfigChanged] = useState(false);
  const [eventTypes, setEventTypes] = useState((existing?.eventTypes ?? []).join(', '));
  const [channels, setChannels] = useState((existing?.channels ?? []).join(', '));
  const [filter, setFilter] = useState(
    existing?.filter ? JSON.stringify(existing.filter, null, 2) : '',
  );
  const catalog = useCatalog(props.client);
  const chosenTypes = eventTypes
    .split(',')
    .map((type) => type.trim())
    .filter(Boolean);
  const toggleType = (name: string, on: boolean) =>
    setEventTypes(
      (on ? [...chosenTypes, name] : chosenTypes.filter((type) => type !== name)).join(', '),
    );
  const [delays, setDelays] = useState(
    (existing?.retry.delaysMs ?? [0, 5000, 30000, 120000, 600000]).join(', '),
  );
  const [maxAgeHours, setMaxAgeHours] = useState(
    String((existing?.retry.maxAgeMs ?? 86_400_000) / 3_600_000),
  );
  const [rateLimit, setRateLimit] = useState(
    existing?.rateLimitPerSecond ? String(existing.rateLimitPerSecond) : '',
  );
  const [plainHeaders, setPlainHeaders] = useState(
    (existing?.headers ?? [])
      .filter((h) => !h.sensitive)
      .map((h) => `${h.name}: ${h.value}`)
      .join('\n'),
  );
  const [sensitiveHeaders, setSensitiveHeaders] = useState(
    (existing?.headers ?? [])
      .filter((h) => h.sensitive)
      .map((h) => `${h.name}:`)
      .join('\n'),
  );
  const [headersChanged, setHeadersChanged] = useState(false);
  const [timeoutMs, setTimeoutMs] = useState(existing?.timeoutMs ? String(existing.timeoutMs) : '');
  const storedAuth = existing?.auth?.type ?? null;
  const [authType, setAuthType] = useState<string>(storedAuth ? 'keep' : 'none');
  const [authFields, setAuthFields] = useState<Record<string, string>>({});
  const authField = (name: string) =>
    input(authFields[name] ?? '', (value) => setAuthFields({ ...authFields, [name]: value }), {
      autoComplete: 'off',
      ...(name === 'password' || name === 'token' || name === 'clientSecret'
        ? { type: 'password' }
        : {}),
    });
  const authText = (name: string, rows: number) =>
    function Control(ids: { id: string; describedBy?: string; invalid: boolean }) {
      return (
        <textarea
          id={ids.id}
          aria-describedby={ids.describedBy}
          aria-invalid={ids.invalid}
          rows={rows}
          autoComplete="off"
          spellCheck={false}
          value={authFields[name] ?? ''}
          onChange={(e) => setAuthFields({ ...authFields, [name]: e.target.value })}
        />
      );
    };
  const [tlsCa, setTlsCa] = useState(existing?.tlsCa ?? '');
  const [status, setStatus] = useState<string>(existing?.status ?? 'active');
  const [fifo, setFifo] = useState(existing?.fifoEnabled ?? false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const rule = fifoSwitchRule({ plan: props.plan, kind, fifoEnabled: fifo });

  async function submit(event: FormEvent) {
    event.preventDefault();
    const local: Record<string, string> = {};
    const parsedDelays = parseDelays(delays);
    if (typeof parsedDelays === 'string') local.retry = parsedDelays;
    let parsedConfig: Record<string, unknown> | undefined;
    // An edit sends the config only when it was changed: stored credentials are never shown, so
    // sending the shown config back would drop them.
    if (kind !== 'http' && kind !== 'polling' && config.trim() && (!existing || configChanged)) {
      try {
        parsedConfig = JSON.parse(config) as Record<string, unknown>;
      } catch {
        local.config = 'Config must be a JSON object';
      }
    }
    let headers: ReturnType<typeof parseHeaderLines> | undefined;
    if (kind === 'http' && (headersChanged || !existing)) {
      const plain = parseHeaderLines(plainHeaders, false);
      const sensitive = parseHeaderLines(sensitiveHeaders, true);
      if (typeof plain === 'string') local.headers = plain;
      else if (typeof sensitive === 'string') local.headers = `Sensitive headers: ${sensitive}`;
      else headers = [...plain, ...sensitive];
    }
    let parsedFilter: Record<string, unknown> | null = null;
    if (filter.trim()) {
      try {
        parsedFilter = JSON.parse(filter) as Record<string, unknown>;
      } catch {
        local.filter = 'The filter must be a JSON object';
      }
    }
    setErrors(local);
    setFailure(null);
    if (Object.keys(local).length > 0) return;
    const body: Record<string, unknown> = {
      eventTypes: chosenTypes,
      channels: channels
        .split(',')
        .map((channel) => channel.trim())
        .filter(Boolean),
      filter: parsedFilter,
      retry: { delaysMs: parsedDelays, maxAgeMs: Math.round(Number(maxAgeHours) * 3_600_000) },
      rateLimitPerSecond: rateLimit.trim() ? Number(rateLimit) : null,
      status,
      fifoEnabled: fifo,
    };
    if (description.trim() || existing?.description) body.description = description;
    if (kind === 'http') {
      body.url = url;
      if (headers && (existing || headers.length > 0)) body.headers = headers;
      if (timeoutMs.trim()) body.timeoutMs = Number(timeoutMs);
      else if (existing?.timeoutMs) body.timeoutMs = null;
      // Auth is write-only: sent only when chosen anew (or removed).
      if (authType === 'none' && storedAuth) body.auth = null;
      else if (authType !== 'none' && authType !== 'keep') {
        const fields = Object.entries(authFields).filter(
          ([name, value]) => !(OPTIONAL_AUTH_FIELDS.has(name) && value.trim() === ''),
        );
        body.auth = { type: authType, ...Object.fromEntries(fields) };
      }
      // The CA is not secret: shown, and sent when changed (empty removes it).
      if (tlsCa.trim() !== (existing?.tlsCa ?? '').trim()) {
        body.tlsCa = tlsCa.trim() ? tlsCa.trim() + '\n' : null;
      }
    }
    if (parsedConfig) body.config = parsedConfig;
    if (!existing) body.kind = kind;
    setBusy(true);
    try {
      const saved = existing
        ? await props.client.patch<Endpoint>(`/webhook-endpoints/${existing.id}`, body)
        : await props.client.post<Endpoint>('/webhook-endpoints', body);
      props.onSaved(saved);
    } catch (caught) {
      if (caught instanceof ApiError && caught.issues.length > 0) {
        const byField: Record<string, string> = {};
        for (const issue of caught.issues) byField[fieldOf(issue.path)] ??= issue.message;
        setErrors(byField);
        const known = [
          'url',
          'config',
          'eventTypes',
          'channels',
          'filter',
          'retry',
          'rateLimitPerSecond',
          'headers',
          'auth',
          'timeoutMs',
          'tlsCa',
          'status',
          'fifoEnabled',
          'description',
          'kind',
        ];
        if (!Object.keys(byField).some((field) => known.includes(field))) setFailure(caught);
      } else if (caught instanceof ApiError && CODE_FIELDS[caught.code]) {
        setErrors({ [CODE_FIELDS[caught.code]]: caught.message });
      } else {
        setFailure(caught);
      }
    } finally {
      setBusy(false);
    }
  }

  const input = (
    value: string,
    set: (value: string) => void,
    extra: Record<string, unknown> = {},
  ) =>
    function Control(ids: { id: string; describedBy?: string; invalid: boolean }) {
      return (
        <input
          id={ids.id}
          aria-describedby={ids.describedBy}
          aria-invalid={ids.invalid}
          value={value}
          onChange={(e) => set(e.target.value)}
          {...extra}
        />
      );
    };

  return (
    <Dialog title={existing ? 'Edit endpoint' : 'Create endpoint'} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Kind" error={errors.kind}>
          {({ id, describedBy }) => (
            <select
              id={id}
              aria-describedby={describedBy}
              value={kind}
              disabled={!!existing}
              onChange={(e) => setKind(e.target.value)}
            >
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          )}
        </Field>
        {kind === 'http' ? (
          <Field label="URL" error={errors.url} hint="Where Hookbase POSTs each event.">
            {input(url, setUrl, { type: 'url', placeholder: 'https://example.com/webhooks' })}
          </Field>
        ) : null}
        {kind !== 'http' && kind !== 'polling' ? (
          <Field
            label="Config (JSON)"
            error={errors.config}
            hint={`For example ${CONFIG_HINTS[kind] ?? '{}'}. Credentials (under "credentials") are write-only: they are never shown again.`}
          >
            {({ id, describedBy, invalid }) => (
              <textarea
                id={id}
                aria-describedby={describedBy}
                aria-invalid={invalid}
                rows={5}
                value={config}
                onChange={(e) => {
                  setConfig(e.target.value);
                  setConfigChanged(true);
                }}
              />
            )}
          </Field>
        ) : null}
        {kind === 'http' ? (
          <>
            <Field
              label="Headers"
              error={errors.headers}
              hint="Added to every request: one Name: value per line."
            >
              {({ id, describedBy, invalid }) => (
                <textarea
                  id={id}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  rows={2}
                  value={plainHeaders}
                  onChange={(e) => {
                    setPlainHeaders(e.target.value);
                    setHeadersChanged(true);
                  }}
                />
              )}
            </Field>
            <Field
              label="Sensitive headers"
              hint="Stored encrypted and never shown again: Name: value per line; a name alone keeps its stored value."
            >
              {({ id, describedBy }) => (
                <textarea
                  id={id}
                  aria-describedby={describedBy}
                  rows={2}
                  value={sensitiveHeaders}
                  autoComplete="off"
                  onChange={(e) => {
                    setSensitiveHeaders(e.target.value);
                    setHeadersChanged(true);
                  }}
                />
              )}
            </Field>
            <div className="row">
              <Field
                label="Authentication"
                error={errors.auth}
                hint="Secrets are write-only: they are stored encrypted and never shown again."
              >
                {({ id, describedBy }) => (
                  <select
                    id={id}
                    aria-describedby={describedBy}
                    value={authType}
                    onChange={(e) => {
                      setAuthType(e.target.value);
                      setAuthFields({});
                    }}
                  >
                    {storedAuth ? <option value="keep">Keep stored ({storedAuth})</option> : null}
                    {AUTH_TYPES.map((type) => (
                      <option key={type} value={type}>
                        {AUTH_LABELS[type] ?? type}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field
                label="Timeout (ms)"
                error={errors.timeoutMs}
                hint="Empty: the installation's timeout."
              >
                {input(timeoutMs, setTimeoutMs, { type: 'number', min: 100 })}
              </Field>
            </div>
            {authType === 'basic' ? (
              <div className="row">
                <Field label="Username">{authField('username')}</Field>
                <Field label="Password">{authField('password')}</Field>
              </div>
            ) : null}
            {authType === 'bearer' ? <Field label="Token">{authField('token')}</Field> : null}
            {authType === 'oauth2_client_credentials' ? (
              <>
                <Field label="Token URL">{authField('tokenUrl')}</Field>
                <div className="row">
                  <Field label="Client id">{authField('clientId')}</Field>
                  <Field label="Client secret">{authField('clientSecret')}</Field>
                </div>
                <div className="row">
                  <Field label="Scope" hint="Optional.">
                    {authField('scope')}
                  </Field>
                  <Field label="Audience" hint="Optional.">
                    {authField('audience')}
                  </Field>
                </div>
              </>
            ) : null}
            {authType === 'mtls' ? (
              <>
                <Field
                  label="Client certificate (PEM)"
                  hint="Presented on the TLS connection; with its chain if the receiver needs it."
                >
                  {authText('certificate', 4)}
                </Field>
                <Field label="Private key (PEM)" hint="Write-only: stored encrypted, never shown.">
                  {authText('privateKey', 4)}
                </Field>
              </>
            ) : null}
            <Field
              label="Trusted CA (PEM)"
              error={errors.tlsCa}
              hint="Certificates trusted for this endpoint only, beside the usual roots: for a receiver with a self-signed certificate or a private CA. Empty: the usual roots."
            >
              {({ id, describedBy, invalid }) => (
                <textarea
                  id={id}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  rows={3}
                  spellCheck={false}
                  value={tlsCa}
                  onChange={(e) => setTlsCa(e.target.value)}
                />
              )}
            </Field>
          </>
        ) : null}
        <Field label="Description" error={errors.description}>
          {input(description, setDescription)}
        </Field>
        <Field
          label="Event types"
          error={errors.eventTypes}
          hint="Comma separated, e.g. order.created, order.*. Empty: every type."
        >
          {input(eventTypes, setEventTypes)}
        </Field>
        {catalog.length > 0 ? (
          <fieldset className="catalog-pick">
            <legend>Pick from the event type catalog</legend>
            {catalog.map((type) => (
              <label key={type.name} className="inline">
                <input
                  type="checkbox"
                  checked={chosenTypes.includes(type.name)}
                  onChange={(e) => toggleType(type.name, e.target.checked)}
                />{' '}
                {type.name}
                {type.deprecated ? ' (deprecated)' : ''}
              </label>
            ))}
          </fieldset>
        ) : null}
        <Field
          label="Channels"
          error={errors.channels}
          hint="Comma separated. Empty: events on any channel."
        >
          {input(channels, setChannels)}
        </Field>
        <Field
          label="Filter"
          error={errors.filter}
          hint='JSON, e.g. { "payload.total": { "$gte": 100 } }. Empty: no filter.'
        >
          {({ id, describedBy, invalid }) => (
            <textarea
              id={id}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              rows={3}
              value={filter}
              onChange={(e) => setFilter(e.target.value)}
            />
          )}
        </Field>
        <div className="row">
          <Field
            label="Retry delays (ms)"
            error={errors.retry}
            hint="One delay per attempt, comma separated."
          >
            {input(delays, setDelays)}
          </Field>
          <Field label="Give up after (hours)">
            {input(maxAgeHours, setMaxAgeHours, { type: 'number', min: 0, step: 'any' })}
          </Field>
        </div>
        <div className="row">
          <Field
            label="Rate limit (per second)"
            error={errors.rateLimitPerSecond}
            hint="Empty: no limit."
          >
            {input(rateLimit, setRateLimit, { type: 'number', min: 1 })}
          </Field>
          <Field label="Status" error={errors.status}>
            {({ id, describedBy }) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={status}
                onChange={(e) => setStatus(e.target.value)}
              >
                <option value="active">active</option>
                <option value="paused">paused</option>
                <option value="disabled">disabled</option>
              </select>
            )}
          </Field>
        </div>
        <Field
          label="FIFO ordering"
          error={errors.fifoEnabled}
          hint={
            rule.reason ? (
              <>
                {rule.reason}{' '}
                {props.plan === 'free' && kind !== 'polling' ? (
                  <a href="/docs#updateOrganization" target="_blank" rel="noreferrer">
                    Plan rules
                  </a>
                ) : null}
              </>
            ) : (
              'Deliver one message at a time, in order: a failing message holds back the ones behind it.'
            )
          }
        >
          {({ id, describedBy }) => (
            <button
              id={id}
              type="button"
              role="switch"
              aria-checked={fifo}
              aria-describedby={describedBy}
              aria-disabled={rule.disabled}
              className={fifo ? 'switch on' : 'switch'}
              onClick={() => {
                if (!rule.disabled) setFifo(!fifo);
              }}
            >
              <span aria-hidden="true" className="knob" />
              {fifo ? 'On' : 'Off'}
            </button>
          )}
        </Field>
        <ErrorBox error={failure} />
        <div className="actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {existing ? 'Save' : 'Create'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The organization's live event types, for picking subscriptions (none when it has no catalog). */
function useCatalog(client: Client): EventType[] {
  const [types, setTypes] = useState<EventType[]>([]);
  useEffect(() => {
    let current = true;
    client
      .get<EventType[]>('/event-types?limit=250')
      .then((all) => current && setTypes(all.filter((type) => !type.archived)))
      .catch(() => current && setTypes([]));
    return () => {
      current = false;
    };
  }, [client]);
  return types;
}
