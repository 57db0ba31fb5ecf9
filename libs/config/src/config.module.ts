import { DynamicModule, Global, Module } from '@nestjs/common';
import { HookbaseConfig } from './config';

export const HOOKBASE_CONFIG = Symbol('HOOKBASE_CONFIG');

/** Makes the configuration validated at boot injectable everywhere as HOOKBASE_CONFIG. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: HookbaseConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: HOOKBASE_CONFIG, useValue: config }],
      exports: [HOOKBASE_CONFIG],
    };
  }
}
