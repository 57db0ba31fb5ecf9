import type {
  AttemptOutcome,
  EndpointKind,
  HostIdentityGrant,
  ReceiverOptions,
} from '@hookbase/domain';

/** One message as a destination sees it, for one attempt. */
export interface OutboundMessage {
  messageId: string;
  /** Stable across retries and replays: receivers deduplicate by it. */
  webhookId: string;
  eventId: string;
  eventType: string;
  payload: Record<string, unknown>;
  attemptNumber: number;
}

/** Each payload's JSON, made once for all the messages that share the payload object. */
const bodies = new WeakMap<object, string>();

/**
 * A message's payload as the JSON text every destination sends. The messages of an event taken in
 * together share one payload object (read once from the event), so an event fanned out to many
 * endpoints is written out once, not once per attempt. Payloads are never changed once read.
 */
export function payloadBody(payload: Record<string, unknown>): string {
  let body = bodies.get(payload);
  if (body === undefined) {
    body = JSON.stringify(payload);
    bodies.set(payload, body);
  }
  return body;
}

/** The endpoint state read fresh before the attempt. */
export interface DeliveryTarget {
  endpointId: string;
  kind: EndpointKind;
  url: string | null;
  config: Record<string, unknown>;
  secrets: readonly string[];
  /**
   * The endpoint delivers in order (FIFO). Adapters whose service orders by a key use the endpoint
   * id as that key (Pub/Sub's ordering key); SQS and SNS order by their `.fifo` queues and topics.
   */
  ordered?: boolean;
  /**
   * The organization's opt-in to the host's cloud identity (null or absent: off). A cloud endpoint
   * without credentials is refused unless it covers the target.
   */
  hostIdentity?: HostIdentityGrant | null;
  /** http: the endpoint's headers, auth, timeout and CA, opened; absent when none is set. */
  receiver?: ReceiverOptions | null;
}

export interface DeliveryReport {
  outcome: AttemptOutcome;
  durationMs: number;
  responseExcerpt: string | null;
}

/** One adapter per endpoint kind; each turns what its transport saw into a typed outcome. */
export interface DestinationAdapter {
  readonly kind: EndpointKind;
  deliver(message: OutboundMessage, target: DeliveryTarget): Promise<DeliveryReport>;
}
