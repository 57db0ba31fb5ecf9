import { z } from 'zod';
import { isStorableText, unstorableTextAt } from './storable-text';

/**
 * Applications group an organization's endpoints by the producer's own customer. An application
 * has a Hookbase id (`app_…`) and, optionally, the producer's own `uid` for that customer; either
 * names it wherever an application is asked for. The rule that keeps customers apart is
 * `inApplicationScope`: an event for an application reaches only that application's endpoints,
 * and an event for none reaches only endpoints of no application.
 */

export const APPLICATION_ID_PATTERN = /^app_[0-9a-z]{26}$/;
/** A uid: the producer's own id, 1 to 256 characters, never starting with `app_`. */
export const APPLICATION_UID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,255}$/;
/** Most bytes of an application's metadata, as compact JSON. */
export const APPLICATION_METADATA_MAX_BYTES = 4096;

/** Whether a reference is a Hookbase application id (else it is taken as a uid). */
export function isApplicationId(reference: string): boolean {
  return APPLICATION_ID_PATTERN.test(reference);
}

/** Whether a string may be an application's uid. */
export function isApplicationUid(value: string): boolean {
  return APPLICATION_UID_PATTERN.test(value) && !value.startsWith('app_');
}

/**
 * Whether an endpoint is in the scope of an event: both belong to the same application, or
 * neither belongs to one. The one rule of recipient matching that applications add.
 */
export function inApplicationScope(
  endpointApplicationId: string | null | undefined,
  eventApplicationId: string | null | undefined,
): boolean {
  return (endpointApplicationId ?? null) === (eventApplicationId ?? null);
}

/** The application a reference names among known ones: by id, else by uid; undefined if none. */
export function findApplication<T extends { id: string; uid: string | null }>(
  applications: readonly T[],
  reference: string,
): T | undefined {
  return isApplicationId(reference)
    ? applications.find((application) => application.id === reference)
    : applications.find((application) => application.uid === reference);
}

/** An application named by its id or its uid. */
export const applicationRefSchema = z
  .string()
  .min(1)
  .max(256)
  .refine(
    (value) => isApplicationId(value) || isApplicationUid(value),
    'must be an application id (app_…) or uid (letters, digits and _ . : - only)',
  );

const applicationUid = z
  .string()
  .min(1)
  .max(256)
  .refine(isApplicationUid, 'letters, digits and _ . : - only, not starting with app_');

/** A small JSON object of the producer's own, at most APPLICATION_METADATA_MAX_BYTES as JSON. */
const applicationMetadata = z.record(z.string(), z.unknown()).superRefine((metadata, context) => {
  const at = unstorableTextAt(metadata);
  if (at !== null) {
    context.addIssue({ code: 'custom', message: `${at} contains text that cannot be stored` });
    return;
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > APPLICATION_METADATA_MAX_BYTES) {
    context.addIssue({
      code: 'custom',
      message: `must be at most ${APPLICATION_METADATA_MAX_BYTES} bytes as JSON (is ${bytes})`,
    });
  }
});

const applicationName = z.string().trim().min(1).max(200).refine(isStorableText, 'not storable');

/** Days an application's log is kept (fractions allowed), at most its plan's; null: the plan's. */
const retentionDays = z.number().positive().max(3650);

export const createApplicationSchema = z.strictObject({
  name: applicationName,
  uid: applicationUid.nullable().optional(),
  metadata: applicationMetadata.optional(),
  retentionDays: retentionDays.nullable().optional(),
});
export type CreateApplicationInput = z.infer<typeof createApplicationSchema>;

export const updateApplicationSchema = z.strictObject({
  name: applicationName.optional(),
  uid: applicationUid.nullable().optional(),
  metadata: applicationMetadata.optional(),
  retentionDays: retentionDays.nullable().optional(),
});
export type UpdateApplicationInput = z.infer<typeof updateApplicationSchema>;

/**
 * The retention an application asks for, checked against its plan's: an application may keep its
 * log for less than the plan does, never more. Answers the problem, or null when it fits.
 */
export function retentionProblem(requestedDays: number | null, planDays: number): string | null {
  if (requestedDays === null || requestedDays <= planDays) return null;
  return `retentionDays must be at most the plan's ${planDays} days`;
}
