import { JWT } from 'google-auth-library';
import { pubsubClientConfig } from './pubsub.adapter';

describe('pubsubClientConfig', () => {
  it('uses Google defaults without an endpoint', () => {
    expect(pubsubClientConfig({ projectId: 'my-project', topic: 'orders' })).toEqual({
      projectId: 'my-project',
    });
  });

  it('reaches an http endpoint as an emulator: plain gRPC, no metadata-server lookups', () => {
    expect(
      pubsubClientConfig({
        projectId: 'my-project',
        topic: 'orders',
        endpoint: 'http://127.0.0.1:8085',
      }),
    ).toEqual({
      projectId: 'my-project',
      apiEndpoint: '127.0.0.1:8085',
      emulatorMode: true,
      universeDomain: 'googleapis.com',
    });
  });

  it('reaches an https endpoint over TLS with credentials (port 443 by default)', () => {
    const settings = pubsubClientConfig({
      projectId: 'my-project',
      topic: 'orders',
      endpoint: 'https://pubsub.example.com',
      credentials: {
        clientEmail: 'svc@my-project.iam.gserviceaccount.com',
        privateKey: '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n',
      },
    });
    const { authClient, ...rest } = settings;
    expect(rest).toEqual({
      projectId: 'my-project',
      apiEndpoint: 'pubsub.example.com:443',
      emulatorMode: false,
    });
    // The service account's own client (not the deprecated `credentials` option), with Pub/Sub's scopes.
    expect(authClient).toBeInstanceOf(JWT);
    const jwt = authClient as JWT;
    expect(jwt.email).toBe('svc@my-project.iam.gserviceaccount.com');
    expect(jwt.key).toBe('-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n');
    expect(jwt.scopes).toEqual(expect.arrayContaining(['https://www.googleapis.com/auth/pubsub']));
    expect(settings).not.toHaveProperty('credentials');
  });

  it('dials a checked address while TLS and :authority still name the host', () => {
    expect(
      pubsubClientConfig(
        { projectId: 'my-project', topic: 'orders', endpoint: 'https://pubsub.example.com' },
        '93.184.216.34',
      ),
    ).toEqual({
      projectId: 'my-project',
      apiEndpoint: '93.184.216.34:443',
      emulatorMode: false,
      'grpc.default_authority': 'pubsub.example.com',
      'grpc.ssl_target_name_override': 'pubsub.example.com',
    });
    expect(
      pubsubClientConfig(
        { projectId: 'my-project', topic: 'orders', endpoint: 'http://emulator.example:8085' },
        '127.0.0.1',
      ),
    ).toEqual({
      projectId: 'my-project',
      apiEndpoint: '127.0.0.1:8085',
      emulatorMode: true,
      universeDomain: 'googleapis.com',
      'grpc.default_authority': 'emulator.example:8085',
    });
  });
});
