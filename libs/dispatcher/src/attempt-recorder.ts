import { Injectable } from '@nestjs/common';
import { GroupedWork } from '@hookbase/domain';
import { AttemptRecord, MessageRepository } from '@hookbase/persistence';

const MAX_GROUP = 500;

/**
 * Writes attempts in groups: while one write is under way, the attempts that finish meanwhile
 * queue and go together in the next transaction. Each caller still waits until its own attempt
 * is stored. No timer, so a quiet dispatcher writes at once; a busy one makes few transactions
 * instead of one per message (one transaction per attempt was the delivery path's ceiling).
 */
@Injectable()
export class AttemptRecorder {
  private readonly writes: GroupedWork<AttemptRecord, void>;

  constructor(messages: MessageRepository) {
    this.writes = new GroupedWork<AttemptRecord, void>(async (records) => {
      await messages.recordAttempts(records);
      return records.map(() => undefined);
    }, MAX_GROUP);
  }

  async record(record: AttemptRecord): Promise<void> {
    await this.writes.run([record]);
  }
}
