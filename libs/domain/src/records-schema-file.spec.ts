import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { eventEnvelopeSchema } from './records';

/** The JSON Schema we publish for direct Kafka producers is the one ingest's consumer enforces. */
describe('docs/schemas/event-envelope.schema.json', () => {
  it('matches the envelope schema in code', () => {
    const file = JSON.parse(
      readFileSync(join(__dirname, '../../../docs/schemas/event-envelope.schema.json'), 'utf8'),
    );
    const { title, description, ...published } = file;
    expect(title).toBe('Hookbase event envelope');
    expect(description).toEqual(expect.any(String));
    // After changing the envelope: `npm run schemas` rewrites the file.
    expect(published).toEqual(z.toJSONSchema(eventEnvelopeSchema));
  });
});
