import { Scenario } from '../core/session';
import { E2E } from './e2e';
import { FIFO_MANY, FIFO_RTT } from './fifo';
import { INGEST_KAFKA } from './ingest/kafka';
import { INGEST_BATCH, INGEST_GRPC, INGEST_REST } from './ingest/steps';
import { ISOLATION } from './isolation';

/** Every scenario, in the order `all` runs them. */
export const SCENARIO_LIST: readonly Scenario[] = [
  INGEST_REST,
  INGEST_BATCH,
  INGEST_GRPC,
  INGEST_KAFKA,
  E2E,
  FIFO_RTT,
  FIFO_MANY,
  ISOLATION,
];
