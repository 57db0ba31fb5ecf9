import {
  DeleteMessageBatchCommand,
  Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';

/**
 * Reads an SQS queue (in an emulator) until `count` messages have arrived or `timeoutMs` has
 * passed, deleting what it reads (a FIFO queue hands out a group's next messages only once the
 * earlier ones are deleted). Returns what arrived, in arrival order, with every attribute; fewer
 * than `count` when the time ran out, so a test can also check that nothing came.
 */
export async function receiveFromQueue(
  sqs: SQSClient,
  queueUrl: string,
  count: number,
  timeoutMs = 30_000,
): Promise<Message[]> {
  const received: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (received.length < count && Date.now() < deadline) {
    // Long polling (up to 1 s) paces the loop: no sleep between reads.
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 300,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) continue;
    received.push(...Messages);
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
  return received;
}

/** `receiveFromQueue`, failing with what it saw unless all `count` messages arrived. */
export async function receiveExactly(
  sqs: SQSClient,
  queueUrl: string,
  count: number,
  timeoutMs = 30_000,
): Promise<Message[]> {
  const received = await receiveFromQueue(sqs, queueUrl, count, timeoutMs);
  if (received.length < count) {
    throw new Error(
      `Timed out after ${timeoutMs} ms waiting for ${count} messages in ${queueUrl}; got ${received.length}`,
    );
  }
  return received;
}
