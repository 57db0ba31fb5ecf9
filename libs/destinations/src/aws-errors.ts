import type { AttemptOutcome } from '@hookbase/domain';
import {
  asShape,
  errorText,
  isNetworkFailure,
  isTimeout,
  networkText,
  stringField,
} from './transport-errors';
import { isTargetRefusal } from './guarded-lookup';

/**
 * How an AWS SDK (v3) error becomes an attempt outcome. Pure: it reads only the error.
 *
 * - retry: throttling, service-side faults and 5xx, timeouts, connections that failed;
 * - failed: access denied and bad credentials, a queue / topic / bus / bucket that does not
 *   exist, invalid parameters, other 4xx and 3xx (e.g. a bucket in another region).
 *
 * An error we cannot place is retried: the schedule and the endpoint's max age bound it, and
 * retrying a mistake costs less than dropping a message that would have gone through.
 */
export type AwsErrorOutcome = Exclude<AttemptOutcome, { kind: 'succeeded' }>;

/** Error codes that mean "not now": throttling and transient faults, whatever the status. */
export const AWS_RETRYABLE_CODES: ReadonlySet<string> = new Set([
  // throttling
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'AWS.SimpleQueueService.RequestThrottled',
  'TooManyRequestsException',
  'TooManyRequests',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'SlowDown',
  'PriorRequestNotComplete',
  'EC2ThrottledException',
  'KMSThrottlingException',
  'KmsThrottled',
  'KMS.ThrottlingException',
  // transient faults
  'InternalError',
  'InternalFailure',
  'InternalServerError',
  'InternalServerException',
  'InternalErrorException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'ServiceUnavailableError',
  'ServiceException',
  'TransactionInProgressException',
  'RequestTimeout',
  'RequestTimeoutException',
  'IDPCommunicationError',
  'KMSInternalException',
  // the caller's clock: the SDK corrects its skew on the next request
  'RequestTimeTooSkewed',
  'RequestExpired',
  'RequestInTheFuture',
]);

/** Error codes that will not change by sending again: permissions, missing resources, bad input. */
export const AWS_PERMANENT_CODES: ReadonlySet<string> = new Set([
  // credentials and permissions
  'AccessDenied',
  'AccessDeniedException',
  'AuthorizationError',
  'AuthorizationErrorException',
  'AuthFailure',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'MissingAuthenticationToken',
  'InvalidSecurity',
  'AWS.SimpleQueueService.InvalidSecurity',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidToken',
  'AllAccessDisabled',
  'AccountProblem',
  'OptInRequired',
  'NotAuthorized',
  'UnauthorizedOperation',
  'KMSAccessDeniedException',
  'KmsAccessDenied',
  'KMSDisabledException',
  'KmsDisabled',
  'KMSInvalidStateException',
  'KmsInvalidState',
  'KMSNotFoundException',
  'KmsNotFound',
  'KMSOptInRequired',
  'KmsOptInRequired',
  'KmsInvalidKeyUsage',
  // the resource does not exist
  'AWS.SimpleQueueService.NonExistentQueue',
  'QueueDoesNotExist',
  'NonExistentQueue',
  'AWS.SimpleQueueService.QueueDeletedRecently',
  'QueueDeletedRecently',
  'NotFound',
  'NotFoundException',
  'NoSuchBucket',
  'NoSuchKey',
  'ResourceNotFoundException',
  'EndpointDisabled',
  'EndpointDisabledException',
  // the request is invalid
  'InvalidParameter',
  'InvalidParameterException',
  'InvalidParameterValue',
  'InvalidParameterValueException',
  'InvalidParameterCombination',
  'MissingParameter',
  'ValidationError',
  'ValidationException',
  'InvalidArgument',
  'InvalidRequest',
  'InvalidAddress',
  'InvalidMessageContents',
  'AWS.SimpleQueueService.UnsupportedOperation',
  'UnsupportedOperation',
  'InvalidBucketName',
  'KeyTooLongError',
  'EntityTooLarge',
  'MetadataTooLarge',
  'MalformedXML',
  'InvalidAction',
  'InvalidQueryParameter',
  'MalformedQueryString',
  'SerializationException',
  'AuthorizationHeaderMalformed',
  'PermanentRedirect',
  'IllegalLocationConstraintException',
  'BatchRequestTooLong',
  'AWS.SimpleQueueService.BatchRequestTooLong',
  'RequestSizeTooLarge',
  // EventBridge's per-entry codes
  'MalformedDetail',
  'NotAuthorizedForSourceException',
  'NotAuthorizedForDetailTypeException',
  'InvalidEventBusName',
  'CredentialsProviderError',
]);

interface AwsErrorShape {
  name?: unknown;
  Code?: unknown;
  code?: unknown;
  message?: unknown;
  $fault?: unknown;
  $retryable?: { throttling?: unknown } | null;
  $metadata?: { httpStatusCode?: unknown } | null;
}

/** The service's error code: query-compatible errors carry the wire code in `Code`. */
export function awsErrorCode(error: unknown): string | undefined {
  const shape = asShape(error) as AwsErrorShape;
  const code = stringField(shape.Code);
  const name = stringField(shape.name);
  // `name` is the modelled exception (QueueDoesNotExist); `Code` the legacy wire code
  // (AWS.SimpleQueueService.NonExistentQueue). Either may be the one a table knows.
  if (code && (AWS_RETRYABLE_CODES.has(code) || AWS_PERMANENT_CODES.has(code))) return code;
  if (name && name !== 'Error') return name;
  return code ?? stringField(shape.code);
}

function httpStatus(error: unknown): number | undefined {
  const status = (asShape(error) as AwsErrorShape).$metadata?.httpStatusCode;
  return typeof status === 'number' && Number.isInteger(status) ? status : undefined;
}

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429]);

export function classifyAwsError(error: unknown): AwsErrorOutcome {
  const shape = asShape(error) as AwsErrorShape;
  const status = httpStatus(error);
  const code = awsErrorCode(error);
  const message = stringField(shape.message) ?? (typeof error === 'string' ? error : '');
  const withStatus = <T extends AwsErrorOutcome>(outcome: T): T =>
    status === undefined ? outcome : { ...outcome, status };
  const described = errorText(
    code && !message.startsWith(code)
      ? `${code}: ${message || '(no message)'}`
      : message || code || String(error),
  );

  // The target policy refused the address at connect time: sending again meets the same rule.
  if (isTargetRefusal(error)) {
    return {
      kind: 'failed',
      error: errorText(message.replace(/^AWS SDK error wrapper for (?:Error: )?/, '')),
    };
  }
  // A service that answered: its code is the most precise fact we have.
  if (code && AWS_RETRYABLE_CODES.has(code)) return withStatus({ kind: 'retry', error: described });
  if (code && AWS_PERMANENT_CODES.has(code))
    return withStatus({ kind: 'failed', error: described });
  // The transport: never reached the service, or no answer in time.
  if (status === undefined && isTimeout(error)) return { kind: 'retry', error: 'timeout' };
  if (status === undefined && isNetworkFailure(error)) {
    return { kind: 'retry', error: networkText(error) };
  }
  // What the SDK itself concluded.
  const retryable = shape.$retryable;
  if (retryable && typeof retryable === 'object') {
    return withStatus({ kind: 'retry', error: described });
  }
  if (status !== undefined) {
    if (status >= 500 || RETRYABLE_STATUSES.has(status)) {
      return { kind: 'retry', status, error: described };
    }
    if (status >= 300) return { kind: 'failed', status, error: described };
  }
  if (shape.$fault === 'server') return withStatus({ kind: 'retry', error: described });
  if (shape.$fault === 'client') return withStatus({ kind: 'failed', error: described });
  return withStatus({ kind: 'retry', error: described || 'unknown error' });
}
