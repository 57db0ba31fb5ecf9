import { Dispatcher, request } from 'undici';
import { checkTargetUrl, DomainError, type ReceiverAuth } from '@hookbase/domain';
import { clientKey } from './cloud-support';

type OAuth2Auth = Extract<ReceiverAuth, { type: 'oauth2_client_credentials' }>;

/** A token fetch that failed: nothing was sent to the receiver. Never carries a secret. */
export class TokenFetchError extends Error {
  constructor(
    message: string,
    /** The token URL is not allowed (target policy): retrying cannot help. */
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'TokenFetchError';
  }
}

/** Tokens are used until this long before they expire (at most a tenth of their lifetime). */
const EXPIRY_MARGIN_MS = 30_000;
/** A token answered without `expires_in` is kept this long. */
const DEFAULT_LIFETIME_MS = 300_000;
const MAX_TOKENS = 1_000;

interface CachedToken {
  accessToken: string;
  /** When to stop using it: shortly before it expires. */
  refreshAt: number;
}

/**
 * OAuth2 client-credentials tokens by client (token URL, id, secret, scope, audience): fetched on
 * first use, kept until shortly before they expire, shared by concurrent attempts (one fetch in
 * flight per client). The token URL is held to the same target policy as endpoint URLs (the
 * dispatcher given resolves through the guarded lookup, or checks the name before the proxy).
 */
export class OAuth2TokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<CachedToken>>();

  constructor(
    private readonly options: {
      /** How a request to the token URL leaves (the egress proxy or the guarded agent). */
      dispatcherFor: (url: URL) => Promise<Dispatcher>;
      allowPrivateTargets: boolean;
      timeoutMs: number;
      userAgent: string;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** A valid token; `cached` says whether it was already held before this call. */
  async token(auth: OAuth2Auth): Promise<{ accessToken: string; cached: boolean }> {
    const key = keyOf(auth);
    const held = this.tokens.get(key);
    if (held && held.refreshAt > this.now()) {
      return { accessToken: held.accessToken, cached: true };
    }
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetchToken(auth).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    const fresh = await pending;
    this.tokens.delete(key);
    this.tokens.set(key, fresh);
    while (this.tokens.size > MAX_TOKENS) this.tokens.delete(this.tokens.keys().next().value!);
    return { accessToken: fresh.accessToken, cached: false };
  }

  /** Drops the held token (the receiver refused it). */
  forget(auth: OAuth2Auth): void {
    this.tokens.delete(keyOf(auth));
  }

  private async fetchToken(auth: OAuth2Auth): Promise<CachedToken> {
    let url: URL;
    try {
      url = checkTargetUrl(auth.tokenUrl, { allowPrivate: this.options.allowPrivateTargets });
    } catch (error) {
      const reason = error instanceof DomainError ? error.message : String(error);
      throw new TokenFetchError(`oauth2 token request refused: ${reason}`, true);
    }
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scope !== undefined) form.set('scope', auth.scope);
    if (auth.audience !== undefined) form.set('audience', auth.audience);
    // client_secret_basic (RFC 6749 2.3.1): each part form-encoded, then base64.
    const basic = Buffer.from(
      `${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`,
    ).toString('base64');
    let status: number;
    let text: string;
    try {
      const response = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${basic}`,
          'user-agent': this.options.userAgent,
        },
        body: form.toString(),
        dispatcher: await this.options.dispatcherFor(url),
        // undici's request never follows redirects.
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      status = response.statusCode;
      text = (await response.body.text()).slice(0, 64 * 1024);
    } catch (error) {
      const err = error as { code?: string; cause?: { code?: string }; name?: string };
      const code = err.code ?? err.cause?.code ?? err.name ?? 'error';
      throw new TokenFetchError(
        `oauth2 token request failed: ${code} (${url.host})`,
        code === 'URL_NOT_ALLOWED',
      );
    }
    if (status < 200 || status > 299) {
      // The body of an error may echo what was sent: only the status and the OAuth error code.
      throw new TokenFetchError(
        `oauth2 token request failed: ${url.host} answered ${status}${oauthErrorCode(text)}`,
      );
    }
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new TokenFetchError(`oauth2 token request failed: ${url.host} answered no JSON`);
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new TokenFetchError(`oauth2 token request failed: ${url.host} gave no access_token`);
    }
    const lifetimeMs =
      typeof body.expires_in === 'number' && body.expires_in > 0
        ? body.expires_in * 1000
        : DEFAULT_LIFETIME_MS;
    const margin = Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 10);
    return { accessToken: body.access_token, refreshAt: this.now() + lifetimeMs - margin };
  }
}

function keyOf(auth: OAuth2Auth): string {
  return clientKey([auth.tokenUrl, auth.clientId, auth.clientSecret, auth.scope, auth.audience]);
}

function oauthErrorCode(text: string): string {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    return typeof error === 'string' && /^[\x20-\x7e]{1,64}$/.test(error) ? ` (${error})` : '';
  } catch {
    return '';
  }
}
