import { createHash } from 'node:crypto';
import { BodyDigests, benchSequence, parseS3Key, s3EndpointPrefix } from './cloud';
import { benchPayload } from './publisher';

describe('benchSequence', () => {
  it('reads the sequence number of a bench payload, padded or not', () => {
    expect(benchSequence(JSON.stringify(benchPayload(42, 256)))).toBe(42);
    expect(benchSequence(JSON.stringify(benchPayload(0, 0)))).toBe(0);
  });

  it('is undefined for anything else', () => {
    for (const body of [undefined, '', 'not json', 'null', '[]', '{"s":"1"}', '{"s":1.5}', '{}'])
      expect(benchSequence(body)).toBeUndefined();
    expect(benchSequence('{"s":-1}')).toBeUndefined();
  });
});

describe('S3 keys', () => {
  const root = 'bench-1a2b3c4d/';

  it('gives each endpoint its own prefix and reads it back from the keys the adapter writes', () => {
    const prefix = s3EndpointPrefix(root, 17);
    expect(prefix).toBe('bench-1a2b3c4d/e17/');
    // libs/destinations s3ObjectKey: `<prefix><eventType>/<messageId>.json`
    expect(parseS3Key(root, `${prefix}bench.event/msg_01HX.json`)).toEqual({
      endpoint: 17,
      eventType: 'bench.event',
      messageId: 'msg_01HX',
    });
  });

  it('refuses keys of another run or another layout', () => {
    expect(parseS3Key(root, 'bench-other/e1/bench.event/m.json')).toBeUndefined();
    expect(parseS3Key(root, `${root}e1/m.json`)).toBeUndefined();
    expect(parseS3Key(root, `${root}e1/bench.event/m.txt`)).toBeUndefined();
    expect(parseS3Key(root, `${root}x1/bench.event/m.json`)).toBeUndefined();
    expect(parseS3Key(root, `${root}e1/a/b/m.json`)).toBeUndefined();
  });
});

describe('BodyDigests', () => {
  it('names the event whose body an S3 ETag (quoted MD5) is of', () => {
    const digests = new BodyDigests(100, 256);
    const body = JSON.stringify(benchPayload(37, 256));
    const md5 = createHash('md5').update(body).digest('hex');
    expect(digests.seqOf(`"${md5}"`)).toBe(37);
    expect(digests.seqOf(md5.toUpperCase())).toBe(37);
  });

  it('knows no other body', () => {
    const digests = new BodyDigests(10, 256);
    const other = createHash('md5')
      .update(JSON.stringify(benchPayload(3, 128)))
      .digest('hex');
    expect(digests.seqOf(`"${other}"`)).toBeUndefined();
    expect(digests.seqOf(undefined)).toBeUndefined();
    // A multipart ETag (md5-of-parts, then -N) is never a single body's.
    expect(digests.seqOf('"0123456789abcdef0123456789abcdef-2"')).toBeUndefined();
  });
});
