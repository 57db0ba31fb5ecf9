import { Injectable } from '@nestjs/common';
import { GroupedWork } from '@hookbase/domain';
import { EventRepository } from '@hookbase/persistence';

/** Reads an event's payload for an attempt about to start, of a message that waited without it. */
export interface PayloadReads {
  /** The event's payload as published; undefined when it is no longer stored (purged, pruned). */
  read(eventId: string): Promise<Record<string, unknown> | undefined>;
}

/**
 * The payloads that messages waited without (over a read-ahead's budget, on the stream or in a
 * FIFO lane), read when their attempts are about to start: the reads asked for together, by the
 * stream's attempts and the lanes' heads alike, go in one statement.
 */
@Injectable()
export class EventPayloads implements PayloadReads {
  private readonly reads: GroupedWork<string, Record<string, unknown> | undefined>;

  constructor(events: EventRepository) {
    this.reads = new GroupedWork<string, Record<string, unknown> | undefined>(async (eventIds) => {
      const payloads = await events.payloads(eventIds);
      return eventIds.map((eventId) => payloads.get(eventId));
    });
  }

  async read(eventId: string): Promise<Record<string, unknown> | undefined> {
    const [payload] = await this.reads.run([eventId]);
    return payload;
  }
}
