import { ScenarioUnavailable } from '../core/errors';
import { ApiRefusal, createEndpoint, EndpointRequest, Tenant } from '../core/hookbase-api';

/**
 * Creates an endpoint with FIFO ordering. A build whose API refuses `fifoEnabled: true` with
 * 400 FEATURE_NOT_AVAILABLE (older ones did) stops the scenario with a plain message and exit
 * code 2: not a crash, and not a run on plain endpoints passed off as FIFO. Any other refusal
 * (403 PLAN_REQUIRED, for one) is a real failure and is thrown as is.
 */
export async function createFifoEndpoint(
  scenario: string,
  tenant: Tenant,
  request: EndpointRequest,
  instead = '--non-fifo runs its load on plain endpoints, to check the harness only',
): Promise<string> {
  try {
    return await createEndpoint(tenant, { ...request, fifoEnabled: true });
  } catch (error) {
    if (
      error instanceof ApiRefusal &&
      error.status === 400 &&
      error.code === 'FEATURE_NOT_AVAILABLE'
    ) {
      throw new ScenarioUnavailable(
        `${scenario} needs FIFO endpoints, and this build's API refuses them: creating an endpoint with ` +
          `fifoEnabled: true on a pro organization answered 400 FEATURE_NOT_AVAILABLE ("${error.apiMessage}"). ` +
          `The scenario runs against a build that has FIFO lanes (${instead}).`,
      );
    }
    throw error;
  }
}
