import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import type { Client, GrpcObject, ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { join } from 'node:path';
import type { HookbaseProcess } from './stack';

const PROTO = join(__dirname, '..', '..', '..', 'proto', 'hookbase', 'v1', 'ingest.proto');

/* eslint-disable @typescript-eslint/no-explicit-any -- calls are made by method name in tests */
export type GrpcIngestClient = Client & Record<string, any>;

/**
 * A real @grpc/grpc-js client of `hookbase.v1.Ingest` at `address`, built from the checked-in
 * .proto (compiled code elsewhere than the source tree passes its path).
 */
export function grpcIngestClient(address: string, proto = PROTO): GrpcIngestClient {
  const definition = loadSync(proto, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const hookbase = loadPackageDefinition(definition).hookbase as GrpcObject;
  const Ingest = (hookbase.v1 as GrpcObject).Ingest as ServiceClientConstructor;
  return new Ingest(address, credentials.createInsecure()) as GrpcIngestClient;
}

/** The client, connected to the address the process says it listens on (start it with `HOOKBASE_GRPC_PORT=0`). */
export async function connectGrpcIngest(process: HookbaseProcess): Promise<GrpcIngestClient> {
  const [, address] = await process.waitForLine(/gRPC listening on (\S+)/, 30_000);
  return grpcIngestClient(address);
}
