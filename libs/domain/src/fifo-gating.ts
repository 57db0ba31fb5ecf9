import { DomainError } from './errors';
import type { EndpointKind, Plan } from './model';

export const FIFO_PLANS: readonly Plan[] = ['pro', 'business'];

/**
 * Whether an endpoint may have FIFO ordering set to `requested`. Turning it off is always
 * allowed; keeping it on is allowed after a downgrade; turning it on needs a FIFO plan and a push
 * endpoint (a polling consumer already pulls in order).
 */
export function checkFifoSetting(input: {
  plan: Plan;
  kind: EndpointKind;
  currentlyEnabled: boolean;
  requested: boolean;
}): void {
  if (!input.requested) return;
  if (input.kind === 'polling') {
    throw new DomainError(
      'FIFO_NOT_SUPPORTED',
      'FIFO ordering does not apply to polling endpoints: their consumer already pulls in order',
    );
  }
  if (input.currentlyEnabled) return;
  if (!FIFO_PLANS.includes(input.plan)) {
    throw new DomainError('PLAN_REQUIRED', 'FIFO ordering requires the pro or business plan', {
      requiredPlans: FIFO_PLANS,
    });
  }
}
