import { z } from 'zod';
import {
  AWS_ACCOUNT_ID_PATTERN,
  AWS_REGION_PATTERN,
  checkTargetUrl,
  CloudTargetScope,
  GOOGLE_PROJECT_ID_PATTERN,
  DomainError,
  type EndpointKind,
  type ValidationIssue,
} from '@hookbase/domain';

/**
 * The `config` of each cloud endpoint kind, validated when an endpoint is created or patched and
 * again before every attempt. Unknown fields are rejected so a typo never passes silently.
 *
 * `endpoint` overrides the service's address (emulators such as moto or the Pub/Sub fake, VPC
 * endpoints): http or https only. Without it the SDK's regional endpoint is used. Credentials may
 * be left out only when the operator opted the organization in to the host's identity (the SDK's
 * default chain), and never with an endpoint override (see host-identity.ts).
 */

export const CLOUD_DESTINATION_KINDS = ['sqs', 'sns', 'eventbridge', 'pubsub', 's3'] as const;
export type CloudDestinationKind = (typeof CLOUD_DESTINATION_KINDS)[number];

export function isCloudDestinationKind(kind: EndpointKind | string): kind is CloudDestinationKind {
  return (CLOUD_DESTINATION_KINDS as readonly string[]).includes(kind);
}

const region = z.string().regex(AWS_REGION_PATTERN, 'must be an AWS region such as us-east-1');

const serviceUrl = z
  .string()
  .max(2048)
  .superRefine((raw, context) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      context.addIssue({ code: 'custom', message: 'must be an absolute http or https URL' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      context.addIssue({ code: 'custom', message: `must be http or https, not ${url.protocol}` });
    }
    if (url.username !== '' || url.password !== '') {
      context.addIssue({ code: 'custom', message: 'must not carry credentials (user:password@)' });
    }
    if (url.search !== '' || url.hash !== '') {
      context.addIssue({ code: 'custom', message: 'must not have a query or a fragment' });
    }
  });

export const awsCredentialsSchema = z.strictObject({
  accessKeyId: z.string().regex(/^\w{16,128}$/, 'must be an AWS access key id (16 to 128 letters)'),
  secretAccessKey: z.string().min(1).max(256),
  sessionToken: z.string().min(1).max(8192).optional(),
});
export type AwsCredentials = z.infer<typeof awsCredentialsSchema>;

/** A Google service account's key (the `client_email` and `private_key` of its JSON key file). */
export const googleCredentialsSchema = z.strictObject({
  clientEmail: z.email().max(320),
  privateKey: z
    .string()
    .max(8192)
    .regex(/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'must be a PEM private key'),
});
export type GoogleCredentials = z.infer<typeof googleCredentialsSchema>;

const awsCommon = {
  region,
  endpoint: serviceUrl.optional(),
  credentials: awsCredentialsSchema.optional(),
};

// https://sqs.<region>.amazonaws.com/<account>/<name>[.fifo] (emulators answer with their own host).
const QUEUE_PATH = /^\/\d{12}\/[A-Za-z0-9_-]{1,80}(\.fifo)?$/;
export const sqsConfigSchema = z.strictObject({
  ...awsCommon,
  queueUrl: serviceUrl.refine(
    (raw) => URL.canParse(raw) && QUEUE_PATH.test(new URL(raw).pathname),
    {
      message:
        'must be a queue URL such as https://sqs.us-east-1.amazonaws.com/123456789012/orders',
    },
  ),
});
export type SqsConfig = z.infer<typeof sqsConfigSchema>;

const TOPIC_ARN = /^arn:aws[a-z-]*:sns:([a-z0-9-]+):(\d{12}):[A-Za-z0-9_-]{1,256}(\.fifo)?$/;
export const snsConfigSchema = z
  .strictObject({
    ...awsCommon,
    topicArn: z
      .string()
      .regex(
        TOPIC_ARN,
        'must be an SNS topic ARN such as arn:aws:sns:us-east-1:123456789012:orders',
      ),
  })
  .superRefine((config, context) => {
    const arnRegion = TOPIC_ARN.exec(config.topicArn)?.[1];
    if (arnRegion && arnRegion !== config.region) {
      context.addIssue({
        code: 'custom',
        path: ['region'],
        message: `must be the topic's region (${arnRegion})`,
      });
    }
  });
export type SnsConfig = z.infer<typeof snsConfigSchema>;

export const eventBridgeConfigSchema = z.strictObject({
  ...awsCommon,
  /** A bus name or ARN. */
  eventBusName: z
    .string()
    .min(1)
    .max(1600)
    .regex(/^[/.\-_A-Za-z0-9:]+$/, 'must be an event bus name or ARN'),
  /** The events' `source`; AWS reserves `aws.*`. */
  source: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[A-Za-z0-9._\-/]+$/, 'letters, digits and . _ - / only')
    .refine((source) => !source.startsWith('aws.'), { message: 'must not start with aws.' })
    .default('hookbase'),
});
export type EventBridgeConfig = z.infer<typeof eventBridgeConfigSchema>;

export const s3ConfigSchema = z.strictObject({
  ...awsCommon,
  bucket: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3 to 63 a-z 0-9 . -)'),
  /** Prepended to every key as is: end it with `/` to make it a folder. */
  prefix: z
    .string()
    .max(512)
    .refine((prefix) => ![...prefix].some((char) => char < ' ' || char === '\u007f'), {
      message: 'must not contain control characters',
    })
    .refine((prefix) => !prefix.startsWith('/'), { message: 'must not start with /' })
    .default(''),
  /** The bucket's owning account: S3 refuses the write when another account owns the bucket. */
  expectedBucketOwner: z
    .string()
    .regex(AWS_ACCOUNT_ID_PATTERN, 'must be a 12-digit AWS account id')
    .optional(),
});
export type S3Config = z.infer<typeof s3ConfigSchema>;

export const pubsubConfigSchema = z.strictObject({
  /** A Google Cloud project id (optionally domain-scoped: example.com:project). */
  projectId: z
    .string()
    .regex(GOOGLE_PROJECT_ID_PATTERN, 'must be a Google Cloud project id such as my-project'),
  /** The topic's short name, or its full name projects/<projectId>/topics/<name>. */
  topic: z
    .string()
    .regex(
      /^(projects\/[^/]+\/topics\/)?[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$/,
      'must be a Pub/Sub topic name (3 to 255 characters, starting with a letter)',
    )
    .refine((topic) => !/(^|\/topics\/)goog/i.test(topic), { message: 'must not start with goog' }),
  /**
   * The Pub/Sub service address. `http://host:port` is an emulator (plain gRPC, no credentials);
   * `https://...` is a TLS endpoint with credentials.
   */
  endpoint: serviceUrl.optional(),
  credentials: googleCredentialsSchema.optional(),
});
export type PubsubConfig = z.infer<typeof pubsubConfigSchema>;

export const destinationConfigSchemas = {
  sqs: sqsConfigSchema,
  sns: snsConfigSchema,
  eventbridge: eventBridgeConfigSchema,
  pubsub: pubsubConfigSchema,
  s3: s3ConfigSchema,
} as const;

/**
 * The fields that say where a cloud endpoint's messages (and so its credentials) go. Stored
 * credentials are bound to them: changing one needs the credentials sent again.
 */
export const CREDENTIAL_TARGET_FIELDS: Record<CloudDestinationKind, readonly string[]> = {
  sqs: ['region', 'endpoint', 'queueUrl'],
  sns: ['region', 'endpoint', 'topicArn'],
  eventbridge: ['region', 'endpoint', 'eventBusName'],
  pubsub: ['projectId', 'endpoint', 'topic'],
  s3: ['region', 'endpoint', 'bucket'],
};

/** The target fields (config.<name>) whose value differs between two configs of one kind. */
export function changedTargetFields(
  kind: CloudDestinationKind,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): string[] {
  return CREDENTIAL_TARGET_FIELDS[kind]
    .filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]))
    .map((field) => `config.${field}`);
}

const EVENT_BUS_ARN = /^arn:aws[a-z-]*:events:[a-z0-9-]+:(\d{12}):event-bus\//;

/** Where a cloud endpoint's config points, as the host-identity rule judges it. */
export function cloudTargetScope(
  kind: CloudDestinationKind,
  config: Record<string, unknown>,
): CloudTargetScope {
  const endpointOverride = config.endpoint !== undefined;
  if (kind === 'pubsub') {
    return { provider: 'google', endpointOverride, projectId: String(config.projectId) };
  }
  const region = String(config.region);
  const text = (field: string) => (typeof config[field] === 'string' ? config[field] : '');
  switch (kind) {
    case 'sqs': {
      const account = /^\/(\d{12})\//.exec(
        URL.canParse(text('queueUrl')) ? new URL(text('queueUrl')).pathname : '',
      );
      return { provider: 'aws', endpointOverride, region, accountId: account?.[1] ?? null };
    }
    case 'sns':
      return {
        provider: 'aws',
        endpointOverride,
        region,
        accountId: TOPIC_ARN.exec(text('topicArn'))?.[2] ?? null,
      };
    case 'eventbridge':
      return {
        provider: 'aws',
        endpointOverride,
        region,
        accountId: EVENT_BUS_ARN.exec(text('eventBusName'))?.[1] ?? null,
        accountHint: 'give eventBusName as the bus ARN',
      };
    case 's3':
      return {
        provider: 'aws',
        endpointOverride,
        region,
        accountId: text('expectedBucketOwner') || null,
        accountHint: 'set expectedBucketOwner',
      };
  }
}

export type DestinationConfigOf<K extends CloudDestinationKind> = z.output<
  (typeof destinationConfigSchemas)[K]
>;

/**
 * The typed config of a cloud endpoint kind. Throws a `VALIDATION_FAILED` DomainError listing every
 * problem, each with its path under `config` (e.g. `config.queueUrl: must be ...`); the message
 * never echoes a credential.
 *
 * With `allowPrivateTargets` given (create / PATCH), an endpoint override is also checked against
 * the private-target rule (`URL_NOT_ALLOWED`), as HTTP endpoint URLs are; adapters check it again
 * on every attempt.
 */
export function parseDestinationConfig<K extends CloudDestinationKind>(
  kind: K,
  raw: unknown,
  options: { allowPrivateTargets?: boolean } = {},
): DestinationConfigOf<K> {
  const schema = destinationConfigSchemas[kind] as z.ZodType | undefined;
  if (!schema) {
    throw new DomainError(
      'VALIDATION_FAILED',
      `Invalid config: kind ${kind} has no config schema`,
      {
        issues: [{ path: 'kind', message: `${kind} is not a cloud destination kind` }],
      },
    );
  }
  const result = schema.safeParse(raw ?? {});
  if (result.success) {
    const config = result.data as DestinationConfigOf<K>;
    if (options.allowPrivateTargets !== undefined && config.endpoint !== undefined) {
      checkTargetUrl(config.endpoint, { allowPrivate: options.allowPrivateTargets });
    }
    return config;
  }
  const issues: ValidationIssue[] = result.error.issues.map((issue) => ({
    path: ['config', ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  const summary = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw new DomainError('VALIDATION_FAILED', `Invalid ${kind} config: ${summary}`, { issues });
}
