import { DomainError } from './errors';
import { checkFifoSetting } from './fifo-gating';
import { ENDPOINT_KINDS, PLANS } from './model';

function codeOf(run: () => void): string | null {
  try {
    run();
    return null;
  } catch (error) {
    return (error as DomainError).code;
  }
}

describe('checkFifoSetting', () => {
  it.each(PLANS.flatMap((plan) => ENDPOINT_KINDS.map((kind) => [plan, kind] as const)))(
    'always allows turning FIFO off (%s, %s)',
    (plan, kind) => {
      expect(
        codeOf(() => checkFifoSetting({ plan, kind, currentlyEnabled: true, requested: false })),
      ).toBeNull();
      expect(
        codeOf(() => checkFifoSetting({ plan, kind, currentlyEnabled: false, requested: false })),
      ).toBeNull();
    },
  );

  it('lets pro and business turn it on for push endpoints', () => {
    for (const plan of ['pro', 'business'] as const) {
      expect(
        codeOf(() =>
          checkFifoSetting({ plan, kind: 'http', currentlyEnabled: false, requested: true }),
        ),
      ).toBeNull();
    }
  });

  it('refuses free plans with PLAN_REQUIRED', () => {
    expect(
      codeOf(() =>
        checkFifoSetting({ plan: 'free', kind: 'sqs', currentlyEnabled: false, requested: true }),
      ),
    ).toBe('PLAN_REQUIRED');
  });

  it('keeps it on after a downgrade', () => {
    expect(
      codeOf(() =>
        checkFifoSetting({ plan: 'free', kind: 'http', currentlyEnabled: true, requested: true }),
      ),
    ).toBeNull();
  });

  it('refuses polling endpoints on every plan', () => {
    for (const plan of PLANS) {
      expect(
        codeOf(() =>
          checkFifoSetting({ plan, kind: 'polling', currentlyEnabled: false, requested: true }),
        ),
      ).toBe('FIFO_NOT_SUPPORTED');
    }
  });
});
