import '@hookbase/runtime/source-maps';
import {
  Hookbase,
  runRelay,
  type CreateApplicationInput,
  type CreateEndpointInput,
  type PublishInput,
  type UpdateEndpointInput,
} from '@hookbase/sdk';
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { configPath, credentials, readConfig, writeConfig } from './config';
import { CliError, describeError, EXIT, usage } from './errors';
import { listen } from './listen';
import { print, processOutput, type Output } from './output';

const HELP = `hookbase: the Hookbase command line

Usage: hookbase <command> [options]        (every command takes --json)

  login --api-url URL --api-key KEY --org ORG_ID
                                     check the key and store it (config file mode 0600)
  orgs                               the organization the key belongs to
  apps list [--uid-prefix P] [--limit N] [--cursor C]
  apps create --name NAME [--uid UID] [--retention-days D]
  apps update APP [--name NAME] [--uid UID] [--retention-days D]
  apps delete APP                    the application and its endpoints (APP: id or uid)
  apps stats APP                     the last hour of the application's endpoints together
  portal APP [--read-only] [--expires-in SECONDS]
                                     a portal link for the application's customer
  portal revoke APP                  revoke every portal link of the application
  purge-payload EVENT                erase an event's payload (the log keeps its rows)
  endpoints list [--app APP]
  endpoints create --url URL [--kind http|polling] [--event-type T]... [--fifo] [--description D]
                   [--app APP]
  endpoints update ENDPOINT [--url URL] [--status active|paused|disabled] [--fifo true|false]
                   [--event-type T]... [--description D]
  endpoints delete ENDPOINT
  send [FILE|-] [--type EVENT_TYPE] [--idempotency-key K] [--endpoint ENDPOINT]... [--app APP]
                                     FILE (or stdin) holds the payload when --type is given,
                                     else the whole event: { "eventType", "payload", ... }
  messages [MESSAGE] [--endpoint E] [--app APP] [--status S] [--event-type T] [--limit N]
           [--cursor C]
  events [EVENT] [--app APP] [--event-type T] [--since ISO_TIME] [--until ISO_TIME] [--limit N]
         [--cursor C]                events newest first (no payloads; EVENT shows one in full)
  fifo-state ENDPOINT [--watch] [--interval MS]
  replay MESSAGE                     send a copy of one message now
  replay --failed --endpoint ENDPOINT|--app APP [--since ISO_TIME] [--until ISO_TIME]
                 [--event-type T]... [--after MESSAGE]
                                     copy the failures of one endpoint, or of an application's
  event-types list                   the organization's event type catalog
  event-types get NAME               one type, with its schema and example
  event-types import FILE            create or update one type per entry of the webhooks of an
                                     OpenAPI 3.1 document (JSON; FILE or - for stdin)
  event-types policy open|declared|validated
                                     what a publish must satisfy against the catalog
  dlq list [--endpoint E] [--app APP] [--reason R] [--limit N] [--cursor C]
  dlq retry DLQ_ENTRY
  listen --forward-to URL [--event-type T]... [--interval MS]
                                     forward a polling endpoint's messages to a local URL
  outbox-relay                       deliver your database's outbox to Hookbase until Ctrl-C;
                                     configured by HOOKBASE_OUTBOX_DATABASE_URL, HOOKBASE_URL,
                                     HOOKBASE_API_KEY, HOOKBASE_OUTBOX_* (see the SDK README)

Environment: HOOKBASE_API_URL, HOOKBASE_API_KEY, HOOKBASE_ORG override the stored login;
XDG_CONFIG_HOME moves the config directory.
Exit codes: 0 ok, 1 the API answered an error, 2 bad usage or input, 3 not logged in or
unreadable config, 4 the API could not be reached.`;

type Options = NonNullable<ParseArgsConfig['options']>;
const GLOBAL: Options = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };

function parse(args: string[], options: Options) {
  try {
    return parseArgs({
      args,
      options: { ...GLOBAL, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw usage((error as Error).message);
  }
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;
const str = (values: Values, name: string) => values[name] as string | undefined;
const list = (values: Values, name: string) => (values[name] as string[] | undefined) ?? [];

function integer(values: Values, name: string): number | undefined {
  const text = str(values, name);
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw usage(`--${name} must be a whole number`);
  return Number(text);
}

function bool(values: Values, name: string): boolean | undefined {
  const text = str(values, name);
  if (text === undefined) return undefined;
  if (text !== 'true' && text !== 'false') throw usage(`--${name} must be true or false`);
  return text === 'true';
}

function one(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw usage(`expected ${what}`);
  return positionals[0];
}

function readJson(file: string | undefined): unknown {
  let text: string;
  try {
    text = readFileSync(!file || file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw usage(`cannot read ${file ?? 'stdin'}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usage(
      `${file && file !== '-' ? file : 'stdin'} is not JSON: ${(error as Error).message}`,
    );
  }
}

function client(): Hookbase {
  const { apiUrl, apiKey, organizationId } = credentials(readConfig());
  return new Hookbase({ baseUrl: apiUrl, apiKey, organizationId });
}

const ENDPOINT_COLUMNS = [
  'id',
  'applicationId',
  'kind',
  'status',
  'fifoEnabled',
  'eventTypes',
  'url',
];
const APPLICATION_COLUMNS = ['id', 'uid', 'name', 'retentionDays', 'createdAt'];

function retentionDays(values: Values): number | null | undefined {
  const text = str(values, 'retention-days');
  if (text === undefined) return undefined;
  if (text === 'none') return null;
  const days = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || days <= 0)
    throw usage('--retention-days must be a positive number or none');
  return days;
}

async function apps(args: string[], output: Output): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parse(rest, {
    name: { type: 'string' },
    uid: { type: 'string' },
    'retention-days': { type: 'string' },
    'uid-prefix': { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
  });
  const hookbase = client();
  const fields = () => {
    const input: Record<string, unknown> = {};
    if (values.name !== undefined) input.name = values.name;
    if (values.uid !== undefined) input.uid = values.uid;
    const days = retentionDays(values);
    if (days !== undefined) input.retentionDays = days;
    return input;
  };
  switch (action) {
    case 'list': {
      const query: Record<string, unknown> = {};
      if (values['uid-prefix'] !== undefined) query.uidPrefix = values['uid-prefix'];
      const limit = integer(values, 'limit');
      if (limit !== undefined) query.limit = limit;
      if (values.cursor !== undefined) query.cursor = values.cursor;
      const page = await hookbase.listApplications(query);
      if (output.json) output.out(JSON.stringify(page, null, 2));
      else {
        print(output, page.data, APPLICATION_COLUMNS);
        if (page.nextCursor) output.out(`next page: --cursor ${page.nextCursor}`);
      }
      return EXIT.ok;
    }
    case 'create': {
      if (positionals.length) throw usage('apps create takes options only');
      if (values.name === undefined) throw usage('apps create needs --name');
      print(
        output,
        await hookbase.createApplication(fields() as CreateApplicationInput),
        APPLICATION_COLUMNS,
      );
      return EXIT.ok;
    }
    case 'update': {
      const id = one(positionals, 'one APP id or uid');
      const input = fields();
      if (!Object.keys(input).length) throw usage('apps update: nothing to change');
      print(output, await hookbase.updateApplication(id, input), APPLICATION_COLUMNS);
      return EXIT.ok;
    }
    case 'delete': {
      const id = one(positionals, 'one APP id or uid');
      print(output, await hookbase.deleteApplication(id), ['id', 'deleted', 'endpointsDeleted']);
      return EXIT.ok;
    }
    case 'stats': {
      const stats = await hookbase.getApplicationStats(one(positionals, 'one APP id or uid'));
      if (output.json) output.out(JSON.stringify(stats, null, 2));
      else
        print(output, stats, [
          'endpoints',
          'from',
          'to',
          'succeeded',
          'failed',
          'successRate',
          'lastAttemptAt',
        ]);
      return EXIT.ok;
    }
    default:
      throw usage('apps list|create|update|delete|stats');
  }
}

async function portal(args: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    'read-only': { type: 'boolean' },
    'expires-in': { type: 'string' },
  });
  const hookbase = client();
  if (positionals[0] === 'revoke') {
    const id = one(positionals.slice(1), 'portal revoke APP');
    print(output, await hookbase.revokePortalAccess(id), ['applicationId', 'revoked']);
    return EXIT.ok;
  }
  const id = one(positionals, 'one APP id or uid');
  const input: Record<string, unknown> = {};
  if (values['read-only']) input.readOnly = true;
  const expiresIn = integer(values, 'expires-in');
  if (expiresIn !== undefined) input.expiresInSeconds = expiresIn;
  print(output, await hookbase.createPortalAccess(id, input), ['url', 'expiresAt', 'readOnly']);
  return EXIT.ok;
}

async function purgePayload(args: string[], output: Output): Promise<number> {
  const { positionals } = parse(args, {});
  const id = one(positionals, 'one EVENT id');
  print(output, await client().purgeEventPayload(id), ['id', 'payloadPurged', 'messagesCancelled']);
  return EXIT.ok;
}
const MESSAGE_COLUMNS = [
  'id',
  'endpointId',
  'eventType',
  'status',
  'attempts',
  'lastResponseStatus',
  'createdAt',
];

async function endpoints(args: string[], output: Output): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parse(rest, {
    url: { type: 'string' },
    kind: { type: 'string' },
    'event-type': { type: 'string', multiple: true },
    fifo: { type: action === 'create' ? 'boolean' : 'string' },
    status: { type: 'string' },
    description: { type: 'string' },
    app: { type: 'string' },
  });
  const hookbase = client();
  const app = str(values, 'app');
  switch (action) {
    case 'list':
      print(
        output,
        await hookbase.listEndpoints(undefined, app ? { applicationId: app } : {}),
        ENDPOINT_COLUMNS,
      );
      return EXIT.ok;
    case 'create': {
      if (positionals.length) throw usage('endpoints create takes options only');
      const input: Record<string, unknown> = { kind: str(values, 'kind') ?? 'http' };
      if (values.url !== undefined) input.url = values.url;
      if (values['event-type']) input.eventTypes = list(values, 'event-type');
      if (values.fifo) input.fifoEnabled = true;
      if (values.status !== undefined) input.status = values.status;
      if (values.description !== undefined) input.description = values.description;
      if (app !== undefined) input.applicationId = app;
      print(output, await hookbase.createEndpoint(input as CreateEndpointInput), ENDPOINT_COLUMNS);
      return EXIT.ok;
    }
    case 'update': {
      const id = one(positionals, 'one ENDPOINT id');
      const input: Record<string, unknown> = {};
      if (values.url !== undefined) input.url = values.url;
      if (values['event-type']) input.eventTypes = list(values, 'event-type');
      const fifo = bool(values, 'fifo');
      if (fifo !== undefined) input.fifoEnabled = fifo;
      if (values.status !== undefined) input.status = values.status;
      if (values.description !== undefined) input.description = values.description;
      if (!Object.keys(input).length) throw usage('endpoints update: nothing to change');
      print(
        output,
        await hookbase.updateEndpoint(id, input as UpdateEndpointInput),
        ENDPOINT_COLUMNS,
      );
      return EXIT.ok;
    }
    case 'delete': {
      const id = one(positionals, 'one ENDPOINT id');
      await hookbase.deleteEndpoint(id);
      if (output.json) output.out(JSON.stringify({ deleted: id }));
      else output.out(`deleted ${id}`);
      return EXIT.ok;
    }
    default:
      throw usage('endpoints list|create|update|delete');
  }
}

async function send(args: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    type: { type: 'string' },
    'idempotency-key': { type: 'string' },
    endpoint: { type: 'string', multiple: true },
    app: { type: 'string' },
  });
  if (positionals.length > 1) throw usage('send takes at most one FILE');
  const json = readJson(positionals[0]);
  const type = str(values, 'type');
  let input: Record<string, unknown>;
  if (type !== undefined) {
    input = { eventType: type, payload: json };
  } else {
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw usage(
        'without --type the JSON must be an event: { "eventType": ..., "payload": {...} }',
      );
    }
    input = { ...(json as Record<string, unknown>) };
  }
  if (values['idempotency-key'] !== undefined) input.idempotencyKey = values['idempotency-key'];
  if (values.endpoint) input.endpointIds = list(values, 'endpoint');
  if (values.app !== undefined) input.applicationId = values.app;
  const result = await client().publish(input as PublishInput);
  print(output, result, ['id', 'eventType', 'acceptedAt', 'duplicate', 'idempotencyKey']);
  return EXIT.ok;
}

async function messages(args: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    endpoint: { type: 'string' },
    app: { type: 'string' },
    status: { type: 'string' },
    'event-type': { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
  });
  const hookbase = client();
  if (positionals.length) {
    const message = (await hookbase.getMessage(one(positionals, 'one MESSAGE id'))) as Record<
      string,
      unknown
    >;
    if (output.json) {
      output.out(JSON.stringify(message, null, 2));
    } else {
      print(output, message, MESSAGE_COLUMNS);
      const attempts = (message.attempts as unknown[] | undefined) ?? [];
      if (Array.isArray(attempts) && attempts.length) {
        output.out('');
        print(output, attempts, [
          'attempt',
          'startedAt',
          'outcome',
          'responseStatus',
          'durationMs',
          'error',
        ]);
      }
    }
    return EXIT.ok;
  }
  const query: Record<string, unknown> = {};
  if (values.endpoint) query.endpointId = values.endpoint;
  if (values.app) query.applicationId = values.app;
  if (values.status) query.status = values.status;
  if (values['event-type']) query.eventType = values['event-type'];
  if (values.cursor) query.cursor = values.cursor;
  const limit = integer(values, 'limit');
  if (limit !== undefined) query.limit = limit;
  const page = await hookbase.listMessages(query);
  if (output.json) output.out(JSON.stringify(page, null, 2));
  else {
    print(output, page.data, MESSAGE_COLUMNS);
    if (page.nextCursor) output.err(`more: --cursor ${page.nextCursor}`);
  }
  return EXIT.ok;
}

const EVENT_COLUMNS = ['id', 'eventType', 'applicationId', 'acceptedAt', 'payloadPurgedAt'];

async function events(args: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    app: { type: 'string' },
    'event-type': { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
  });
  const hookbase = client();
  if (positionals.length) {
    const event = await hookbase.getEvent(one(positionals, 'one EVENT id'));
    output.out(JSON.stringify(event, null, 2));
    return EXIT.ok;
  }
  const query: Record<string, unknown> = {};
  if (values.app) query.applicationId = values.app;
  if (values['event-type']) query.eventType = values['event-type'];
  if (values.since) query.createdAfter = values.since;
  if (values.until) query.createdBefore = values.until;
  if (values.cursor) query.cursor = values.cursor;
  const limit = integer(values, 'limit');
  if (limit !== undefined) query.limit = limit;
  const page = await hookbase.listEvents(query);
  if (output.json) output.out(JSON.stringify(page, null, 2));
  else {
    print(output, page.data, EVENT_COLUMNS);
    if (page.nextCursor) output.err(`more: --cursor ${page.nextCursor}`);
  }
  return EXIT.ok;
}

async function fifoState(args: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    watch: { type: 'boolean' },
    interval: { type: 'string' },
  });
  const id = one(positionals, 'one ENDPOINT id');
  const hookbase = client();
  const columns = [
    'state',
    'blocked',
    'blockedReason',
    'queueDepth',
    'waitingCount',
    'lagSeconds',
    'head',
  ];
  const show = async () => {
    const state = (await hookbase.getFifoState(id)) as Record<string, unknown>;
    const head = state.head as Record<string, unknown> | null;
    const row: Record<string, unknown> = {
      ...state,
      head: head ? `${head.messageId} ${head.status} ${head.attempts}/${head.maxAttempts}` : null,
    };
    if (values.watch) {
      // One line per refresh: easy to follow, and to parse with --json.
      const at = new Date().toISOString();
      if (output.json) output.out(JSON.stringify({ at, ...state }));
      else
        output.out(
          `${at}  ${columns.map((c) => `${c}=${JSON.stringify(row[c] ?? null)}`).join(' ')}`,
        );
    } else if (output.json) output.out(JSON.stringify(state, null, 2));
    else print(output, row, ['fifoEnabled', ...columns]);
  };
  await show();
  if (!values.watch) return EXIT.ok;
  const interval = integer(values, 'interval') ?? 2000;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  try {
    while (!stop.signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, interval);
        stop.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), {
          once: true,
        });
      });
      if (!stop.signal.aborted) await show();
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
  return EXIT.ok;
}

async function replay(args: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    failed: { type: 'boolean' },
    endpoint: { type: 'string' },
    app: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    after: { type: 'string' },
    'event-type': { type: 'string', multiple: true },
  });
  const hookbase = client();
  if (values.failed) {
    const endpoint = str(values, 'endpoint');
    const app = str(values, 'app');
    if (!endpoint === !app || positionals.length)
      throw usage(
        'replay --failed --endpoint ENDPOINT|--app APP [--since ISO_TIME] [--until ISO_TIME] [--event-type T]... [--after MESSAGE]',
      );
    const since = str(values, 'since');
    const until = str(values, 'until');
    const after = str(values, 'after');
    const eventTypes = list(values, 'event-type');
    const range = {
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
      ...(eventTypes.length ? { eventTypes } : {}),
      ...(after ? { after } : {}),
    };
    const result = app
      ? await hookbase.replayApplicationFailed(app, range)
      : await hookbase.replayFailed(endpoint!, range);
    if (output.json) output.out(JSON.stringify(result, null, 2));
    else output.out(JSON.stringify(result));
    return EXIT.ok;
  }
  const copy = await hookbase.replayMessage(
    one(positionals, 'one MESSAGE id (or --failed --endpoint ENDPOINT)'),
  );
  print(output, copy, MESSAGE_COLUMNS);
  return EXIT.ok;
}

const EVENT_TYPE_COLUMNS = ['name', 'version', 'deprecated', 'archived', 'description'];
const POLICIES = ['open', 'declared', 'validated'] as const;

async function eventTypes(args: string[], output: Output): Promise<number> {
  const [action, ...rest] = args;
  const { positionals } = parse(rest, {});
  const hookbase = client();
  switch (action) {
    case 'list': {
      const page = await hookbase.listEventTypes({ limit: 250 });
      print(output, page.data, EVENT_TYPE_COLUMNS);
      return EXIT.ok;
    }
    case 'get':
      print(output, await hookbase.getEventType(one(positionals, 'one event type NAME')), [
        ...EVENT_TYPE_COLUMNS,
        'schema',
        'example',
      ]);
      return EXIT.ok;
    case 'import': {
      const document = readJson(one(positionals, 'one FILE (an OpenAPI 3.1 document, JSON)'));
      if (typeof document !== 'object' || document === null || Array.isArray(document))
        throw usage('the file must hold an OpenAPI document (a JSON object)');
      const report = await hookbase.importEventTypes(document as Record<string, unknown>);
      if (output.json) output.out(JSON.stringify(report, null, 2));
      else
        output.out(
          `created ${report.created.length}, updated ${report.updated.length}, unchanged ${report.unchanged.length}` +
            [
              ...report.created.map((n) => `\n  + ${n}`),
              ...report.updated.map((n) => `\n  ~ ${n}`),
            ].join(''),
        );
      return EXIT.ok;
    }
    case 'policy': {
      const policy = one(positionals, 'open, declared or validated');
      if (!(POLICIES as readonly string[]).includes(policy))
        throw usage('event-types policy open|declared|validated');
      const organization = await hookbase.setEventTypePolicy(policy as (typeof POLICIES)[number]);
      print(output, organization, ['id', 'name', 'eventTypePolicy']);
      return EXIT.ok;
    }
    default:
      throw usage('event-types list|get NAME|import FILE|policy open|declared|validated');
  }
}

async function dlq(args: string[], output: Output): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parse(rest, {
    endpoint: { type: 'string' },
    app: { type: 'string' },
    reason: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
  });
  const hookbase = client();
  if (action === 'list') {
    const query: Record<string, unknown> = {};
    if (values.endpoint) query.endpointId = values.endpoint;
    if (values.app) query.applicationId = values.app;
    if (values.reason) query.reason = values.reason;
    if (values.cursor) query.cursor = values.cursor;
    const limit = integer(values, 'limit');
    if (limit !== undefined) query.limit = limit;
    const page = await hookbase.listDlq(query);
    if (output.json) output.out(JSON.stringify(page, null, 2));
    else {
      print(output, page.data, [
        'id',
        'messageId',
        'endpointId',
        'eventType',
        'reason',
        'attempts',
        'createdAt',
        'retriedAt',
      ]);
      if (page.nextCursor) output.err(`more: --cursor ${page.nextCursor}`);
    }
    return EXIT.ok;
  }
  if (action === 'retry') {
    const copy = await hookbase.retryDlqEntry(one(positionals, 'one DLQ entry id'));
    print(output, copy, MESSAGE_COLUMNS);
    return EXIT.ok;
  }
  throw usage('dlq list|retry');
}

async function login(args: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    'api-url': { type: 'string' },
    'api-key': { type: 'string' },
    org: { type: 'string' },
  });
  const apiUrl = str(values, 'api-url') ?? process.env.HOOKBASE_API_URL;
  const apiKey = str(values, 'api-key') ?? process.env.HOOKBASE_API_KEY;
  const organizationId = str(values, 'org') ?? process.env.HOOKBASE_ORG;
  if (positionals.length || !apiUrl || !apiKey || !organizationId) {
    throw usage('login --api-url URL --api-key KEY --org ORG_ID');
  }
  try {
    new URL(apiUrl);
  } catch {
    throw usage(`--api-url ${apiUrl} is not a URL`);
  }
  const organization = await new Hookbase({
    baseUrl: apiUrl,
    apiKey,
    organizationId,
  }).getOrganization();
  const path = configPath();
  writeConfig({ ...readConfig(path), apiUrl, apiKey, organizationId }, path);
  if (output.json) output.out(JSON.stringify({ organization, configPath: path }));
  else
    output.out(
      `Logged in to ${apiUrl} as ${organizationId} (${(organization as { name?: string }).name}); saved in ${path}`,
    );
  return EXIT.ok;
}

async function orgs(args: string[], output: Output): Promise<number> {
  parse(args, {});
  print(output, [await client().getOrganization()], ['id', 'name', 'plan', 'createdAt']);
  return EXIT.ok;
}

async function listenCommand(args: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    'forward-to': { type: 'string' },
    'event-type': { type: 'string', multiple: true },
    interval: { type: 'string' },
  });
  const forwardTo = str(values, 'forward-to');
  if (!forwardTo || positionals.length) throw usage('listen --forward-to URL');
  try {
    new URL(forwardTo);
  } catch {
    throw usage(`--forward-to ${forwardTo} is not a URL`);
  }
  const { apiUrl, apiKey, organizationId } = credentials(readConfig());
  const hookbase = new Hookbase({ baseUrl: apiUrl, apiKey, organizationId });
  return listen(
    hookbase,
    {
      forwardTo,
      eventTypes: list(values, 'event-type'),
      intervalMs: integer(values, 'interval') ?? 1000,
      timeoutMs: 10_000,
      configPath: configPath(),
      apiUrl,
      organizationId,
    },
    output,
  );
}

/** The @hookbase/sdk outbox relay, configured by its environment variables as its own bin is. */
async function outboxRelay(args: string[]): Promise<number> {
  const { positionals } = parse(args, {});
  if (positionals.length)
    throw usage('outbox-relay takes no arguments (configure it by environment)');
  return runRelay(process.env);
}

const COMMANDS: Record<string, (args: string[], output: Output) => Promise<number>> = {
  login,
  orgs,
  apps,
  portal,
  'purge-payload': purgePayload,
  endpoints,
  send,
  messages,
  events,
  'fifo-state': fifoState,
  replay,
  dlq,
  'event-types': eventTypes,
  listen: listenCommand,
  'outbox-relay': outboxRelay,
};

/** Runs one command line; answers the exit code. */
export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const output = processOutput(json);
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    output.out(HELP);
    return command ? EXIT.ok : EXIT.usage;
  }
  if (args.includes('--help') || args.includes('-h')) {
    output.out(HELP);
    return EXIT.ok;
  }
  const run = COMMANDS[command];
  try {
    if (!run) throw usage(`unknown command ${command}: see hookbase --help`);
    return await run(args, output);
  } catch (error) {
    const { exitCode, error: described } = describeError(error);
    if (json) output.err(JSON.stringify({ error: described }));
    else {
      const status = described.status ? ` (HTTP ${described.status})` : '';
      output.err(`error: ${described.code}${status}: ${described.message}`);
      if (described.details !== undefined)
        output.err(`details: ${JSON.stringify(described.details)}`);
    }
    return exitCode;
  }
}

export { CliError };
