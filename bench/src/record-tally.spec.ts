import { RecordTally } from './record-tally';

describe('RecordTally', () => {
  it('balances when every acknowledged record is read back once', () => {
    const tally = new RecordTally(10);
    tally.ack(0, 5, 1);
    tally.ack(5, 10, 2);
    for (let seq = 0; seq < 10; seq++) tally.read(seq, 3);
    expect(tally).toMatchObject({
      ackedCount: 10,
      distinct: 10,
      duplicates: 0,
      unexpected: 0,
      missing: 0,
    });
    expect(tally.problems('x')).toEqual([]);
    expect(tally.ackTimes).toEqual([
      { at: 1, count: 5 },
      { at: 2, count: 5 },
    ]);
  });

  it('counts duplicates, missing and unacknowledged records', () => {
    const tally = new RecordTally(4);
    tally.ack(0, 3, 1);
    tally.read(0, 2);
    tally.read(0, 2);
    tally.read(3, 2); // never acknowledged
    tally.read(99, 2); // out of range
    expect(tally).toMatchObject({ distinct: 1, duplicates: 1, unexpected: 2, missing: 2 });
    expect(tally.problems('kafkajs')).toEqual([
      'kafkajs: 2 acknowledged records were not read back',
      'kafkajs: 2 records read that were never acknowledged',
    ]);
  });

  it('counts a record acknowledged twice (a retried batch) once', () => {
    const tally = new RecordTally(3);
    tally.ack(0, 3, 1);
    tally.ack(0, 3, 2);
    expect(tally.ackedCount).toBe(3);
  });
});
