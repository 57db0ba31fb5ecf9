import { GroupedWork } from '@hookbase/domain';
import {
  EndpointEntity,
  EndpointRepository,
  FifoLaneRepository,
  LaneWindow,
} from '@hookbase/persistence';

/** Lanes one statement serves at most. */
const MAX_LANES_PER_STATEMENT = 500;

/** An endpoint as a lane last read it, with its signing secrets. */
export interface EndpointRead {
  endpoint: EndpointEntity | undefined;
  secrets: readonly string[];
  /** When the read was started: the state it shows is at least this recent. */
  at: number;
}

/** What a lane asks of the store at its start, at each window and at its end. */
export interface LaneStore {
  /** Takes the lane's lease for this process; false when another owner holds it. */
  acquire(endpointId: string): Promise<boolean>;
  /** The first messages of the lane's queue, head first, within the read-ahead's bounds. */
  queue(endpointId: string): Promise<LaneWindow>;
  /** Gives the lane up if its queue is empty; false when messages are still queued. */
  releaseIfEmpty(endpointId: string): Promise<boolean>;
  /** The endpoint and its signing secrets, read now. */
  endpoint(endpointId: string): Promise<EndpointRead>;
  /** Shows the head as being delivered (`attempt_started`) unless that attempt is recorded. */
  startHeadAttempt(messageId: string, attemptsBefore: number): Promise<void>;
}

/**
 * The lane store calls of one process's lanes, grouped across lanes (ADR 0009): while one
 * statement is under way, the lanes that ask meanwhile wait and go together in the next, so 500
 * lanes starting, reading their queues or ending at once make a few statements, not 500 each.
 * Each lane still gets its own answer, and the same one as from a statement of its own.
 */
export class GroupedLaneStore implements LaneStore {
  private readonly acquires: GroupedWork<string, boolean>;
  private readonly queues: GroupedWork<string, LaneWindow>;
  private readonly releases: GroupedWork<string, boolean>;
  private readonly endpoints: GroupedWork<string, EndpointRead>;
  private readonly heads: GroupedWork<{ messageId: string; attemptsBefore: number }, void>;

  constructor(
    store: FifoLaneRepository,
    endpoints: EndpointRepository,
    owner: string,
    leaseMs: number,
    readAhead: {
      messages: number;
      /** The payload bytes a window may take past its head, asked at each read. */
      bytes: () => number;
    },
  ) {
    this.acquires = new GroupedWork<string, boolean>(async (ids) => {
      const held = await store.acquireMany(ids, owner, leaseMs);
      return ids.map((id) => held.has(id));
    }, MAX_LANES_PER_STATEMENT);
    this.queues = new GroupedWork<string, LaneWindow>(async (ids) => {
      const queues = await store.queues(ids, readAhead.messages, readAhead.bytes());
      // Two calls for one lane in a group each get their own copy of its window.
      return ids.map((id) => {
        const window = queues.get(id);
        return { messages: [...(window?.messages ?? [])], whole: window?.whole ?? true };
      });
    }, MAX_LANES_PER_STATEMENT);
    this.releases = new GroupedWork<string, boolean>(async (ids) => {
      const released = await store.releaseManyIfEmpty(ids, owner);
      return ids.map((id) => released.has(id));
    }, MAX_LANES_PER_STATEMENT);
    this.endpoints = new GroupedWork<string, EndpointRead>(async (ids) => {
      const at = Date.now();
      const read = await endpoints.forDelivery([...new Set(ids)], new Date(at));
      return ids.map((id) => ({
        endpoint: read.endpoints.get(id),
        secrets: read.secrets.get(id) ?? [],
        at,
      }));
    }, MAX_LANES_PER_STATEMENT);
    this.heads = new GroupedWork<{ messageId: string; attemptsBefore: number }, void>(
      async (heads) => {
        await store.startHeadAttempts(heads);
        return heads.map(() => undefined);
      },
      MAX_LANES_PER_STATEMENT,
    );
  }

  async startHeadAttempt(messageId: string, attemptsBefore: number): Promise<void> {
    await this.heads.run([{ messageId, attemptsBefore }]);
  }

  async acquire(endpointId: string): Promise<boolean> {
    const [held] = await this.acquires.run([endpointId]);
    return held;
  }

  async queue(endpointId: string): Promise<LaneWindow> {
    const [queue] = await this.queues.run([endpointId]);
    return queue;
  }

  async releaseIfEmpty(endpointId: string): Promise<boolean> {
    const [released] = await this.releases.run([endpointId]);
    return released;
  }

  async endpoint(endpointId: string): Promise<EndpointRead> {
    const [read] = await this.endpoints.run([endpointId]);
    return read;
  }
}
