/**
 * FIFO check. Within one endpoint (a lane) the publisher never has two publishes in flight, so the
 * order of acceptance is the order of the harness's sequence numbers. An ordered lane's first
 * successful deliveries must arrive in ascending sequence order; a message lost from the middle is
 * counted as missing by the ledger, not as an order violation.
 */
export interface OrderViolation {
  lane: number;
  /** The highest sequence number delivered before the offending one. */
  after: number;
  got: number;
}

export interface OrderReport {
  lanes: number;
  deliveries: number;
  violations: number;
  firstViolations: OrderViolation[];
}

export function checkOrder(
  arrivals: ReadonlyMap<number, readonly number[]>,
  keepExamples = 5,
): OrderReport {
  let deliveries = 0;
  let violations = 0;
  const firstViolations: OrderViolation[] = [];
  for (const [lane, sequence] of arrivals) {
    let highest = -Infinity;
    for (const seq of sequence) {
      deliveries++;
      if (seq < highest) {
        violations++;
        if (firstViolations.length < keepExamples)
          firstViolations.push({ lane, after: highest, got: seq });
      } else highest = seq;
    }
  }
  return { lanes: arrivals.size, deliveries, violations, firstViolations };
}
