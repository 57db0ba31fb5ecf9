import { CloudTargetScope, hostIdentityRefusal } from './host-identity';

const aws = (over: Partial<Extract<CloudTargetScope, { provider: 'aws' }>> = {}) =>
  ({
    provider: 'aws',
    endpointOverride: false,
    region: 'eu-west-1',
    accountId: '123456789012',
    ...over,
  }) as CloudTargetScope;
const google = (over: Partial<Extract<CloudTargetScope, { provider: 'google' }>> = {}) =>
  ({
    provider: 'google',
    endpointOverride: false,
    projectId: 'orders-prod',
    ...over,
  }) as CloudTargetScope;

describe('hostIdentityRefusal', () => {
  it.each([
    ['no grant', null],
    ['an undefined grant', undefined],
  ])('refuses every target with %s', (_, grant) => {
    expect(hostIdentityRefusal(grant, aws())).toMatch(/not allowed to use the host identity/);
    expect(hostIdentityRefusal(grant, google())).toMatch(/not allowed to use the host identity/);
  });

  it.each([
    ['an unrestricted grant', {}],
    ['a grant listing the target', { awsAccountIds: ['123456789012'], awsRegions: ['eu-west-1'] }],
    ['no grant at all', null],
  ])('refuses an endpoint override whatever the grant (%s)', (_, grant) => {
    const refusal = /never used towards an endpoint override/;
    expect(hostIdentityRefusal(grant, aws({ endpointOverride: true }))).toMatch(refusal);
    expect(hostIdentityRefusal(grant, google({ endpointOverride: true }))).toMatch(refusal);
  });

  it('allows any service target under an unrestricted grant', () => {
    expect(hostIdentityRefusal({}, aws())).toBeNull();
    expect(hostIdentityRefusal({}, aws({ accountId: null }))).toBeNull();
    expect(hostIdentityRefusal({}, google())).toBeNull();
  });

  it('holds AWS targets to the listed regions', () => {
    const grant = { awsRegions: ['eu-west-1', 'eu-central-1'] };
    expect(hostIdentityRefusal(grant, aws())).toBeNull();
    expect(hostIdentityRefusal(grant, aws({ region: 'eu-central-1' }))).toBeNull();
    expect(hostIdentityRefusal(grant, aws({ region: 'us-east-1' }))).toBe(
      'config.credentials is required: region us-east-1 is not among those this organization may reach with the host identity',
    );
  });

  it('holds AWS targets to the listed accounts, and refuses one that names no account', () => {
    const grant = { awsAccountIds: ['123456789012'] };
    expect(hostIdentityRefusal(grant, aws())).toBeNull();
    expect(hostIdentityRefusal(grant, aws({ accountId: '210987654321' }))).toMatch(
      /AWS account 210987654321 is not among those/,
    );
    expect(
      hostIdentityRefusal(grant, aws({ accountId: null, accountHint: 'set expectedBucketOwner' })),
    ).toBe(
      'config.credentials is required: this organization may use the host identity only for listed AWS accounts, and the config names none (set expectedBucketOwner)',
    );
    expect(hostIdentityRefusal(grant, aws({ accountId: null }))).toMatch(/names none$/);
  });

  it('needs both lists to agree when both are given', () => {
    const grant = { awsAccountIds: ['123456789012'], awsRegions: ['eu-west-1'] };
    expect(hostIdentityRefusal(grant, aws())).toBeNull();
    expect(hostIdentityRefusal(grant, aws({ region: 'us-east-1' }))).toMatch(/region us-east-1/);
    expect(hostIdentityRefusal(grant, aws({ accountId: '000000000000' }))).toMatch(
      /AWS account 000000000000/,
    );
  });

  it('holds Google targets to the listed projects, and AWS lists do not restrict them', () => {
    const grant = { googleProjectIds: ['orders-prod'], awsRegions: ['eu-west-1'] };
    expect(hostIdentityRefusal(grant, google())).toBeNull();
    expect(hostIdentityRefusal(grant, google({ projectId: 'someone-else' }))).toBe(
      'config.credentials is required: project someone-else is not among those this organization may reach with the host identity',
    );
    expect(hostIdentityRefusal({ awsAccountIds: ['123456789012'] }, google())).toBeNull();
  });

  it('does not restrict AWS targets by a project list', () => {
    expect(hostIdentityRefusal({ googleProjectIds: ['orders-prod'] }, aws())).toBeNull();
  });
});
