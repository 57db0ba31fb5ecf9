import { Injectable } from '@nestjs/common';
import { AttemptRecord, MessageRepository } from '@hookbase/persistence';

const MAX_GROUP = 500;

interface Pending {
  record: AttemptRecord;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Writes attempts in groups: while one write is under way, the attempts that finish meanwhile
 * queue and go together in the next transaction. Each caller still waits until its own attempt
 * is stored. No timer, so a quiet dispatcher writes at once; a busy one makes few transactions
 * instead of one per message (one transaction per attempt was the delivery path's ceiling).
 */
@Injectable()
export class AttemptRecorder {
  private readonly queue: Pending[] = [];
  private flushing = false;

  constructor(private readonly messages: MessageRepository) {}

  record(record: AttemptRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, MAX_GROUP);
        try {
          await this.messages.recordAttempts(group.map((pending) => pending.record));
          group.forEach((pending) => pending.resolve());
        } catch (error) {
          group.forEach((pending) => pending.reject(error));
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
