import { Injectable } from '@nestjs/common';
import { GroupedWork } from '@hookbase/domain';
import { AttemptRecord, MessageRepository } from '@hookbase/persistence';

const MAX_GROUP = 500;

/**
 * How long an idle recorder waits for more attempts before it writes. The attempts of one event
 * to its endpoints end within a few milliseconds of each other; waiting this long lets them go
 * in one statement instead of two or three. The attempt was received already, so no delivery
 * waits for it: only the message's settled state in the store, its partition's committed offset
 * and its endpoint's concurrency slot (held until the record is stored, which bounds what a crash
 * can send again) come this much later.
 */
export const ATTEMPT_GATHER_MS = 5;

/**
 * Writes attempts in groups: while one write is under way, the attempts that finish meanwhile
 * queue and go together in the next transaction, and an idle recorder waits `ATTEMPT_GATHER_MS`
 * for more. Each caller still waits until its own attempt is stored. A busy dispatcher makes few
 * transactions instead of one per message (one transaction per attempt was the delivery path's
 * ceiling). An attempt recorded `soon` (a FIFO lane's head, whose lane reads on only once it is
 * stored) ends the wait.
 */
@Injectable()
export class AttemptRecorder {
  private readonly writes: GroupedWork<AttemptRecord, void>;

  constructor(messages: MessageRepository) {
    this.writes = new GroupedWork<AttemptRecord, void>(
      async (records) => {
        await messages.recordAttempts(records);
        return records.map(() => undefined);
      },
      { maxItems: MAX_GROUP, gatherMs: ATTEMPT_GATHER_MS },
    );
  }

  async record(record: AttemptRecord, options: { soon?: boolean } = {}): Promise<void> {
    await this.writes.run([record], options);
  }
}
