// Integration tests start real processes and wait for real deliveries; each waits with its own
// pollUntil deadline, and this is the outer bound. (testTimeout is not a per-project option.)
jest.setTimeout(180_000);
