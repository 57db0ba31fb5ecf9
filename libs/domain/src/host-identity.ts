/**
 * Whether a cloud endpoint without credentials of its own may use the Hookbase host's cloud
 * identity (the AWS and Google SDKs' default credential chains: environment, instance role,
 * metadata server). Off unless the operator opted the organization in; even then only for the
 * service's own endpoints (never with a tenant-chosen endpoint override, which would carry the
 * host's signature or token to a host the tenant picked) and only for the accounts, regions and
 * projects the grant lists. Pure.
 */

/** An AWS region such as eu-west-1. */
export const AWS_REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
/** A Google Cloud project id, optionally domain-scoped (example.com:project). */
export const GOOGLE_PROJECT_ID_PATTERN = /^([a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
export const AWS_ACCOUNT_ID_PATTERN = /^\d{12}$/;

/**
 * An organization's opt-in to the host's identity. A list that is absent does not restrict;
 * one that is given is the whole set allowed.
 */
export interface HostIdentityGrant {
  awsAccountIds?: readonly string[];
  awsRegions?: readonly string[];
  googleProjectIds?: readonly string[];
}

/** What a cloud endpoint's config says about where the host's identity would act. */
export type CloudTargetScope =
  | {
      provider: 'aws';
      /** A `config.endpoint` override is set. */
      endpointOverride: boolean;
      region: string;
      /** The AWS account the config names (queue URL, ARN, expected bucket owner), or null. */
      accountId: string | null;
      /** Where the config would name the account when it does not (for the refusal's text). */
      accountHint?: string;
    }
  | { provider: 'google'; endpointOverride: boolean; projectId: string };

/** Null when the host's identity may be used for this target; otherwise why not. */
export function hostIdentityRefusal(
  grant: HostIdentityGrant | null | undefined,
  target: CloudTargetScope,
): string | null {
  if (target.endpointOverride) {
    return 'config.credentials is required with config.endpoint: the host identity is never used towards an endpoint override';
  }
  if (!grant) {
    return 'config.credentials is required: this organization is not allowed to use the host identity';
  }
  const outside = (what: string) =>
    `config.credentials is required: ${what} is not among those this organization may reach with the host identity`;
  if (target.provider === 'google') {
    const projects = grant.googleProjectIds;
    if (projects && !projects.includes(target.projectId)) {
      return outside(`project ${target.projectId}`);
    }
    return null;
  }
  if (grant.awsRegions && !grant.awsRegions.includes(target.region)) {
    return outside(`region ${target.region}`);
  }
  const accounts = grant.awsAccountIds;
  if (accounts) {
    if (target.accountId === null) {
      return `config.credentials is required: this organization may use the host identity only for listed AWS accounts, and the config names none${target.accountHint ? ` (${target.accountHint})` : ''}`;
    }
    if (!accounts.includes(target.accountId)) return outside(`AWS account ${target.accountId}`);
  }
  return null;
}
