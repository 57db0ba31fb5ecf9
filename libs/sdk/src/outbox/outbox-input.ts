import {
  DomainError,
  jsonShapeProblem,
  parseInput,
  PublishEventInput,
  publishEventSchema,
} from '@hookbase/domain';
import { OutboxError } from './errors';

/** What `publish` accepts: the body of `POST /v1/events`. */
export interface OutboxEventInput {
  eventType: string;
  payload: Record<string, unknown>;
  /** Defaults to the outbox row's id; give your own to deduplicate your own retries. */
  idempotencyKey?: string;
  /** Deliver only to these endpoints (of the API key's organization). */
  endpointIds?: string[];
}

/** An event ready for the outbox: validated, its payload as the JSON text to store. */
export interface ValidOutboxEvent {
  eventType: string;
  payloadJson: string;
  idempotencyKey?: string;
  endpointIds?: string[];
}

/** Hookbase's default limit on a request body (HOOKBASE_MAX_PAYLOAD_BYTES). */
export const DEFAULT_MAX_EVENT_BYTES = 262_144;

function invalid(path: string, message: string): OutboxError {
  return new OutboxError('VALIDATION_FAILED', `Invalid event: ${path}: ${message}`, {
    issues: [{ path, message }],
  });
}

/**
 * The rules `POST /v1/events` applies (the same schema, the same JSON shape limits, the body size
 * limit), so an event the API would refuse is refused at publish, inside the caller's transaction,
 * rather than later by the relay. Throws OutboxError VALIDATION_FAILED.
 */
export function validateOutboxEvent(
  input: unknown,
  maxEventBytes: number = DEFAULT_MAX_EVENT_BYTES,
): ValidOutboxEvent {
  let event: PublishEventInput;
  try {
    event = parseInput(publishEventSchema, input);
  } catch (error) {
    if (error instanceof DomainError) {
      throw new OutboxError('VALIDATION_FAILED', error.message, error.details);
    }
    throw error;
  }
  let payloadJson: string;
  try {
    payloadJson = JSON.stringify(event.payload);
  } catch (error) {
    throw invalid('payload', `is not JSON: ${(error as Error).message}`);
  }
  const shape = jsonShapeProblem(payloadJson);
  if (shape) throw invalid('payload', shape.message);
  // The request body the relay will send: the event's other fields around the payload.
  const others = Buffer.byteLength(JSON.stringify({ ...event, payload: 0 })) - 1;
  if (others + Buffer.byteLength(payloadJson) > maxEventBytes) {
    throw invalid('(body)', `the event is larger than ${maxEventBytes} bytes as JSON`);
  }
  return {
    eventType: event.eventType,
    payloadJson,
    ...(event.idempotencyKey !== undefined ? { idempotencyKey: event.idempotencyKey } : {}),
    ...(event.endpointIds !== undefined ? { endpointIds: event.endpointIds } : {}),
  };
}
