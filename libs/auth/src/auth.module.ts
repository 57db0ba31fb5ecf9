import { Global, Module } from '@nestjs/common';
import { AuthService } from './auth.service';
import { RefusalCounter, RequestLimits } from './request-limits';

/** Credentials and request limits, shared by every edge that admits callers (HTTP and gRPC). */
@Global()
@Module({
  providers: [AuthService, RequestLimits, RefusalCounter],
  exports: [AuthService, RequestLimits, RefusalCounter],
})
export class AuthModule {}
