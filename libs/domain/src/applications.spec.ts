import {
  APPLICATION_METADATA_MAX_BYTES,
  applicationRefSchema,
  createApplicationSchema,
  findApplication,
  inApplicationScope,
  isApplicationId,
  isApplicationUid,
  retentionProblem,
  updateApplicationSchema,
} from './applications';

const APP_ID = 'app_01234567890123456789abcdef';

describe('inApplicationScope', () => {
  it.each([
    [null, null, true],
    [undefined, null, true],
    [null, undefined, true],
    [undefined, undefined, true],
    ['app_a', 'app_a', true],
    ['app_a', 'app_b', false],
    ['app_a', null, false],
    ['app_a', undefined, false],
    [null, 'app_a', false],
    [undefined, 'app_a', false],
  ])('endpoint of %p, event of %p: %p', (endpoint, event, expected) => {
    expect(inApplicationScope(endpoint, event)).toBe(expected);
  });
});

describe('application references', () => {
  it('tells an id from a uid', () => {
    expect(isApplicationId(APP_ID)).toBe(true);
    expect(isApplicationId('app_short')).toBe(false);
    expect(isApplicationId('customer-42')).toBe(false);
  });

  it('takes uids of letters, digits and _ . : -, never starting with app_', () => {
    expect(isApplicationUid('customer-42')).toBe(true);
    expect(isApplicationUid('Acme.Corp:eu_1')).toBe(true);
    expect(isApplicationUid('app_mine')).toBe(false);
    expect(isApplicationUid(APP_ID)).toBe(false);
    expect(isApplicationUid('-leading')).toBe(false);
    expect(isApplicationUid('has space')).toBe(false);
    expect(isApplicationUid('')).toBe(false);
    expect(isApplicationUid('a'.repeat(256))).toBe(true);
    expect(isApplicationUid('a'.repeat(257))).toBe(false);
  });

  it('accepts an id or a uid as a reference, nothing else', () => {
    expect(applicationRefSchema.safeParse(APP_ID).success).toBe(true);
    expect(applicationRefSchema.safeParse('customer-42').success).toBe(true);
    expect(applicationRefSchema.safeParse('app_not-an-id').success).toBe(false);
    expect(applicationRefSchema.safeParse('with/slash').success).toBe(false);
    expect(applicationRefSchema.safeParse('').success).toBe(false);
  });

  it('finds an application by id or by uid', () => {
    const a = { id: APP_ID, uid: 'customer-a' };
    const b = { id: 'app_01234567890123456789abcdeg', uid: null };
    expect(findApplication([a, b], APP_ID)).toBe(a);
    expect(findApplication([a, b], 'customer-a')).toBe(a);
    expect(findApplication([a, b], b.id)).toBe(b);
    expect(findApplication([a, b], 'customer-b')).toBeUndefined();
  });
});

describe('application inputs', () => {
  it('needs a name; uid and metadata are optional', () => {
    expect(createApplicationSchema.safeParse({ name: 'Acme' }).success).toBe(true);
    expect(createApplicationSchema.safeParse({}).success).toBe(false);
    expect(createApplicationSchema.safeParse({ name: '  ' }).success).toBe(false);
    expect(
      createApplicationSchema.safeParse({ name: 'Acme', uid: 'acme', metadata: { tier: 'gold' } })
        .success,
    ).toBe(true);
  });

  it('refuses a uid starting with app_ and unknown fields', () => {
    expect(createApplicationSchema.safeParse({ name: 'A', uid: 'app_x' }).success).toBe(false);
    expect(createApplicationSchema.safeParse({ name: 'A', other: 1 }).success).toBe(false);
  });

  it('bounds metadata by its size as JSON', () => {
    const fits = { v: 'x'.repeat(APPLICATION_METADATA_MAX_BYTES - 10) };
    const over = { v: 'x'.repeat(APPLICATION_METADATA_MAX_BYTES) };
    expect(createApplicationSchema.safeParse({ name: 'A', metadata: fits }).success).toBe(true);
    expect(createApplicationSchema.safeParse({ name: 'A', metadata: over }).success).toBe(false);
    expect(createApplicationSchema.safeParse({ name: 'A', metadata: [] }).success).toBe(false);
    expect(
      createApplicationSchema.safeParse({ name: 'A', metadata: { k: 'a\u0000b' } }).success,
    ).toBe(false);
  });

  it('lets an update clear the uid with null', () => {
    expect(updateApplicationSchema.parse({ uid: null })).toEqual({ uid: null });
    expect(updateApplicationSchema.safeParse({ uid: 'app_x' }).success).toBe(false);
  });
});

describe('retentionProblem', () => {
  it('lets an application keep its log for less than the plan, never more', () => {
    expect(retentionProblem(null, 7)).toBeNull();
    expect(retentionProblem(1, 7)).toBeNull();
    expect(retentionProblem(7, 7)).toBeNull();
    expect(retentionProblem(0.5, 7)).toBeNull();
    expect(retentionProblem(8, 7)).toMatch(/at most the plan's 7 days/);
  });
});
