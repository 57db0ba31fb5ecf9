import { table } from './output';

describe('CLI tables', () => {
  it('aligns columns under upper-case headers and shows missing values as -', () => {
    const text = table(
      [
        { id: 'ep_1', status: 'active', eventTypes: [] },
        { id: 'ep_22', status: null, eventTypes: ['a', 'b'] },
      ],
      ['id', 'status', 'eventTypes'],
    );
    expect(text.split('\n')).toEqual([
      'ID     STATUS  EVENTTYPES',
      'ep_1   active  *',
      'ep_22  -       a,b',
    ]);
  });
});
