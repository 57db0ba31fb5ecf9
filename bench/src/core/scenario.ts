import { ScenarioOptions } from './options';
import { ScenarioResult } from './result';
import { ScenarioContext } from './session';

/** A scenario: its options (declared for the command line) and its run. */
export interface Scenario extends ScenarioOptions {
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}
