import { DomainError } from '@hookbase/domain';
import {
  changedTargetFields,
  cloudTargetScope,
  isCloudDestinationKind,
  parseDestinationConfig,
} from './destination-config';

const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'sekrit-value' };

function issuesOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_FAILED');
    expect((error as DomainError).message).not.toContain('sekrit-value');
    const { issues } = (error as DomainError).details as { issues: { path: string }[] };
    return issues.map((issue) => issue.path);
  }
  throw new Error('expected a validation error');
}

describe('parseDestinationConfig', () => {
  it('accepts each kind with its defaults filled in', () => {
    expect(
      parseDestinationConfig('sqs', {
        region: 'eu-west-1',
        queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo',
        credentials,
      }),
    ).toEqual({
      region: 'eu-west-1',
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo',
      credentials,
    });
    expect(
      parseDestinationConfig('sns', {
        region: 'us-east-1',
        topicArn: 'arn:aws:sns:us-east-1:123456789012:orders',
      }),
    ).toMatchObject({ topicArn: 'arn:aws:sns:us-east-1:123456789012:orders' });
    expect(
      parseDestinationConfig('eventbridge', { region: 'us-east-1', eventBusName: 'orders' }),
    ).toEqual({ region: 'us-east-1', eventBusName: 'orders', source: 'hookbase' });
    expect(parseDestinationConfig('s3', { region: 'us-east-1', bucket: 'my.bucket-1' })).toEqual({
      region: 'us-east-1',
      bucket: 'my.bucket-1',
      prefix: '',
    });
    expect(
      parseDestinationConfig('pubsub', {
        projectId: 'my-project',
        topic: 'orders',
        endpoint: 'http://127.0.0.1:8085',
      }),
    ).toEqual({ projectId: 'my-project', topic: 'orders', endpoint: 'http://127.0.0.1:8085' });
  });

  it('lists every problem with its path under config', () => {
    expect(
      issuesOf(() =>
        parseDestinationConfig('sqs', {
          region: 'Europe',
          queueUrl: 'ftp://example.com/x',
          extra: 1,
        }),
      ).sort(),
    ).toEqual(['config', 'config.queueUrl', 'config.queueUrl', 'config.region'].sort());
  });

  it.each([
    ['a non-http scheme', 'ftp://127.0.0.1:21'],
    ['user info', 'http://user:pass@127.0.0.1:4566'],
    ['a query', 'http://127.0.0.1:4566/?a=1'],
    ['no URL at all', 'localhost:4566'],
  ])('refuses an endpoint override with %s', (_label, endpoint) => {
    expect(
      issuesOf(() =>
        parseDestinationConfig('s3', { region: 'us-east-1', bucket: 'bucket', endpoint }),
      ),
    ).toContain('config.endpoint');
  });

  it('refuses a topic ARN of another region than the configured one', () => {
    expect(
      issuesOf(() =>
        parseDestinationConfig('sns', {
          region: 'eu-west-1',
          topicArn: 'arn:aws:sns:us-east-1:123456789012:orders',
        }),
      ),
    ).toEqual(['config.region']);
  });

  it('refuses incomplete or malformed credentials without echoing them', () => {
    expect(
      issuesOf(() =>
        parseDestinationConfig('eventbridge', {
          region: 'us-east-1',
          eventBusName: 'default',
          credentials: { accessKeyId: 'short', secretAccessKey: 'sekrit-value' },
        }),
      ),
    ).toEqual(['config.credentials.accessKeyId']);
  });

  it('refuses reserved sources, bad buckets and prefixes, bad Pub/Sub names', () => {
    expect(
      issuesOf(() =>
        parseDestinationConfig('eventbridge', {
          region: 'us-east-1',
          eventBusName: 'default',
          source: 'aws.s3',
        }),
      ),
    ).toEqual(['config.source']);
    expect(
      issuesOf(() =>
        parseDestinationConfig('s3', { region: 'us-east-1', bucket: 'Bad_Bucket', prefix: '/x' }),
      ).sort(),
    ).toEqual(['config.bucket', 'config.prefix']);
    expect(
      issuesOf(() =>
        parseDestinationConfig('s3', { region: 'us-east-1', bucket: 'ok-bucket', prefix: 'a\nb' }),
      ),
    ).toEqual(['config.prefix']);
    expect(
      issuesOf(() => parseDestinationConfig('pubsub', { projectId: 'X', topic: 'goog' })).sort(),
    ).toEqual(['config.projectId', 'config.topic']);
  });

  it('checks an endpoint override against the private-target rule when asked to', () => {
    const config = { region: 'us-east-1', bucket: 'bucket', endpoint: 'http://127.0.0.1:4566' };
    expect(parseDestinationConfig('s3', config)).toMatchObject(config);
    expect(parseDestinationConfig('s3', config, { allowPrivateTargets: true })).toMatchObject(
      config,
    );
    try {
      parseDestinationConfig('s3', config, { allowPrivateTargets: false });
      throw new Error('expected a refusal');
    } catch (error) {
      expect((error as DomainError).code).toBe('URL_NOT_ALLOWED');
    }
  });

  it('treats a missing config as empty (and so lists the required fields)', () => {
    expect(issuesOf(() => parseDestinationConfig('s3', undefined)).sort()).toEqual([
      'config.bucket',
      'config.region',
    ]);
  });

  it('knows which kinds are cloud kinds', () => {
    expect(['sqs', 'sns', 'eventbridge', 'pubsub', 's3'].every(isCloudDestinationKind)).toBe(true);
    expect(isCloudDestinationKind('http')).toBe(false);
    expect(isCloudDestinationKind('polling')).toBe(false);
    expect(() => parseDestinationConfig('http' as never, {})).toThrow(DomainError);
  });
});

describe('cloudTargetScope', () => {
  it('names the AWS account where the config does, and null where it does not', () => {
    const scope = (kind: 'sqs' | 'sns' | 'eventbridge' | 's3', config: Record<string, unknown>) =>
      cloudTargetScope(kind, { region: 'us-east-1', ...config });
    expect(
      scope('sqs', { queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/orders' }),
    ).toEqual({
      provider: 'aws',
      endpointOverride: false,
      region: 'us-east-1',
      accountId: '123456789012',
    });
    expect(
      scope('sns', { topicArn: 'arn:aws:sns:us-east-1:210987654321:orders.fifo' }),
    ).toMatchObject({
      accountId: '210987654321',
    });
    expect(
      scope('eventbridge', {
        eventBusName: 'arn:aws:events:us-east-1:123456789012:event-bus/orders',
      }),
    ).toMatchObject({ accountId: '123456789012' });
    expect(scope('eventbridge', { eventBusName: 'orders' })).toMatchObject({ accountId: null });
    expect(scope('s3', { bucket: 'b-1' })).toMatchObject({ accountId: null });
    expect(scope('s3', { bucket: 'b-1', expectedBucketOwner: '123456789012' })).toMatchObject({
      accountId: '123456789012',
    });
    expect(scope('sqs', { queueUrl: 'x', endpoint: 'http://127.0.0.1:1' })).toMatchObject({
      endpointOverride: true,
      accountId: null,
    });
  });

  it('gives a Pub/Sub target its project', () => {
    expect(cloudTargetScope('pubsub', { projectId: 'orders-prod', topic: 't' })).toEqual({
      provider: 'google',
      endpointOverride: false,
      projectId: 'orders-prod',
    });
  });
});

describe('changedTargetFields', () => {
  it('lists the target fields that differ, an added or removed override included', () => {
    const before = { region: 'us-east-1', bucket: 'a-1', prefix: 'x/' };
    expect(changedTargetFields('s3', before, { ...before, prefix: 'y/' })).toEqual([]);
    expect(changedTargetFields('s3', before, { ...before, endpoint: 'http://h' })).toEqual([
      'config.endpoint',
    ]);
    expect(
      changedTargetFields('s3', { ...before, endpoint: 'http://h' }, { ...before, bucket: 'b-2' }),
    ).toEqual(['config.endpoint', 'config.bucket']);
  });
});
