import {
  authHostOf,
  checkAuthBinding,
  checkEndpointTimeout,
  DomainError,
  headerIssues,
  MASKED_HEADER_VALUE,
  type ReceiverAuth,
  type ReceiverHeaderInput,
  type ReceiverOptions,
  refuseIssues,
  type StoredReceiverHeader,
  type StoredReceiverOptions,
} from '@hookbase/domain';
import { CredentialsCipher } from './credentials-cipher';

/** The receiver fields of a create or PATCH: undefined keeps what is stored, null removes it. */
export interface ReceiverOptionsInput {
  headers?: ReceiverHeaderInput[] | null;
  auth?: ReceiverAuth | null;
  timeoutMs?: number | null;
  tlsCa?: string | null;
}

export function hasReceiverOptionInput(input: ReceiverOptionsInput): boolean {
  return (
    input.headers !== undefined ||
    input.auth !== undefined ||
    input.timeoutMs !== undefined ||
    input.tlsCa !== undefined
  );
}

const authContext = (organizationId: string) => `endpoint-auth:${organizationId}`;
const headerContext = (organizationId: string, name: string) =>
  `endpoint-header:${organizationId}:${name.toLowerCase()}`;

/**
 * Seals (API) and opens (dispatcher) an http endpoint's receiver options. Sensitive header values
 * and the whole `auth` object are sealed with the credentials key (AES-256-GCM, bound to the
 * organization and, for a header, its name); without a key they are refused with
 * FEATURE_NOT_AVAILABLE, as cloud credentials are (ADR 12).
 */
export class ReceiverOptionsSealer {
  private readonly cipher: CredentialsCipher | undefined;

  constructor(settings: { key: string | undefined; previousKeys?: readonly string[] }) {
    this.cipher =
      settings.key === undefined
        ? undefined
        : new CredentialsCipher(settings.key, { previousKeys: settings.previousKeys ?? [] });
  }

  /**
   * What to store from a create or PATCH. `url` is the endpoint's URL after the change and
   * `urlChanged` says whether the request changed it: stored auth kept across a change of host
   * is refused (CREDENTIALS_TARGET_CHANGED). Returns null when nothing is left to store.
   */
  seal(
    organizationId: string,
    input: ReceiverOptionsInput,
    current: StoredReceiverOptions | null,
    options: { url: string; urlChanged: boolean; maxTimeoutMs: number },
  ): StoredReceiverOptions | null {
    const next: StoredReceiverOptions = { ...(current ?? {}) };
    if (input.auth === null) delete next.auth;
    else if (input.auth !== undefined) {
      next.auth = {
        type: input.auth.type,
        host: authHostOf(options.url),
        sealed: this.requireCipher('auth').encrypt(
          input.auth as unknown as Record<string, unknown>,
          authContext(organizationId),
        ),
      };
    } else if (next.auth && options.urlChanged) {
      checkAuthBinding(next.auth.host, options.url);
    }
    if (input.headers === null) delete next.headers;
    else if (input.headers !== undefined) {
      next.headers = this.sealHeaders(organizationId, input.headers, current?.headers ?? [], {
        hasAuth: next.auth !== undefined,
      });
      if (next.headers.length === 0) delete next.headers;
    } else if (next.headers && next.auth) {
      // Auth added beside a stored authorization header: one of them would be lost.
      refuseIssues(
        headerIssues(
          next.headers.map((h) => ({ name: h.name, value: '', sensitive: false })),
          { hasAuth: true, storedSensitive: new Set() },
        ),
      );
    }
    if (input.timeoutMs === null) delete next.timeoutMs;
    else if (input.timeoutMs !== undefined) {
      checkEndpointTimeout(input.timeoutMs, options.maxTimeoutMs);
      next.timeoutMs = input.timeoutMs;
    }
    if (input.tlsCa === null) delete next.tlsCa;
    else if (input.tlsCa !== undefined) next.tlsCa = input.tlsCa;
    return Object.keys(next).length === 0 ? null : next;
  }

  private sealHeaders(
    organizationId: string,
    headers: readonly ReceiverHeaderInput[],
    stored: readonly StoredReceiverHeader[],
    options: { hasAuth: boolean },
  ): StoredReceiverHeader[] {
    const storedSensitive = new Map(
      stored.flatMap((h) => ('sealedValue' in h ? [[h.name.toLowerCase(), h.sealedValue]] : [])),
    );
    refuseIssues(
      headerIssues(headers, {
        hasAuth: options.hasAuth,
        storedSensitive: new Set(storedSensitive.keys()),
      }),
    );
    return headers.map((header) => {
      if (!header.sensitive) return { name: header.name, value: header.value! };
      if (header.value === undefined) {
        return { name: header.name, sealedValue: storedSensitive.get(header.name.toLowerCase())! };
      }
      return {
        name: header.name,
        sealedValue: this.requireCipher('a sensitive header').sealText(
          header.value,
          headerContext(organizationId, header.name),
        ),
      };
    });
  }

  /**
   * The options for one attempt, sealed parts opened. Throws (FEATURE_NOT_AVAILABLE or the
   * cipher's error, never with the plaintext) when they cannot be opened with the configured keys.
   */
  open(organizationId: string, stored: StoredReceiverOptions): ReceiverOptions {
    const headers = (stored.headers ?? []).map((header) =>
      'sealedValue' in header
        ? ([
            header.name,
            this.requireCipher('a sensitive header', true).openText(
              header.sealedValue,
              headerContext(organizationId, header.name),
            ),
          ] as const)
        : ([header.name, header.value] as const),
    );
    const auth = stored.auth
      ? (this.requireCipher('auth', true).decrypt(
          stored.auth.sealed,
          authContext(organizationId),
        ) as unknown as ReceiverAuth)
      : null;
    return {
      headers,
      auth,
      timeoutMs: stored.timeoutMs ?? null,
      tlsCa: stored.tlsCa ?? null,
    };
  }

  private requireCipher(what: string, opening = false): CredentialsCipher {
    if (this.cipher) return this.cipher;
    throw new DomainError(
      'FEATURE_NOT_AVAILABLE',
      opening
        ? `the endpoint has sealed ${what} but HOOKBASE_CREDENTIALS_KEY is not configured`
        : `${what} cannot be stored: this installation has no HOOKBASE_CREDENTIALS_KEY`,
    );
  }
}

/** How the API shows receiver options: sensitive values masked, auth as its type only. */
export function receiverOptionsView(stored: StoredReceiverOptions | null) {
  return {
    headers: (stored?.headers ?? []).map((header) =>
      'sealedValue' in header
        ? { name: header.name, value: MASKED_HEADER_VALUE, sensitive: true }
        : { name: header.name, value: header.value, sensitive: false },
    ),
    auth: stored?.auth ? { type: stored.auth.type, configured: true as const } : null,
    timeoutMs: stored?.timeoutMs ?? null,
    tlsCa: stored?.tlsCa ?? null,
  };
}
