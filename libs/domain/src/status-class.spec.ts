import { statusClass } from './status-class';

describe('statusClass', () => {
  it.each([
    [100, '1xx'],
    [200, '2xx'],
    [204, '2xx'],
    [301, '3xx'],
    [404, '4xx'],
    [429, '4xx'],
    [500, '5xx'],
    [503, '5xx'],
    [599, '5xx'],
  ] as const)('%i is %s', (status, expected) => {
    expect(statusClass(status)).toBe(expected);
  });

  it.each([null, 0, 99, 600, 200.5])('%p has no class', (status) => {
    expect(statusClass(status)).toBe('none');
  });
});
