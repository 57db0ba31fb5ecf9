import { ScenarioUnavailable } from './errors';
import { ApiRefusal, createEndpoint, EndpointRequest, Tenant } from './hookbase-api';

/**
 * Creates an endpoint with FIFO ordering. This build's API refuses `fifoEnabled: true` with
 * 400 FEATURE_NOT_AVAILABLE (FIFO lanes are issue 5): that refusal stops the scenario with a
 * plain message and exit code 2 — not a crash, and not a run on plain endpoints passed off as
 * FIFO. Any other refusal is a real failure and is thrown as is.
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
          `FIFO lanes are issue 5; the scenario is implemented and runs once they land (${instead}).`,
      );
    }
    throw error;
  }
}
