import { generateCredentialsKey } from './credentials-cipher';
import { ReceiverOptionsSealer, receiverOptionsView } from './receiver-options';

describe('ReceiverOptionsSealer', () => {
  const sealer = new ReceiverOptionsSealer({ key: generateCredentialsKey() });
  const target = { url: 'https://hooks.example/in', urlChanged: true, maxTimeoutMs: 15_000 };

  it('seals sensitive values and auth, shows them masked, opens them for an attempt', () => {
    const stored = sealer.seal(
      'org_a',
      {
        headers: [
          { name: 'X-Tenant', value: 'acme', sensitive: false },
          { name: 'x-api-key', value: 'top-secret', sensitive: true },
        ],
        auth: { type: 'bearer', token: 'bearer-secret' },
        timeoutMs: 2_000,
      },
      null,
      target,
    )!;
    expect(JSON.stringify(stored)).not.toContain('top-secret');
    expect(JSON.stringify(stored)).not.toContain('bearer-secret');
    expect(stored.auth).toMatchObject({ type: 'bearer', host: 'hooks.example' });
    expect(receiverOptionsView(stored)).toEqual({
      headers: [
        { name: 'X-Tenant', value: 'acme', sensitive: false },
        { name: 'x-api-key', value: '********', sensitive: true },
      ],
      auth: { type: 'bearer', configured: true },
      timeoutMs: 2_000,
      tlsCa: null,
    });
    expect(sealer.open('org_a', stored)).toEqual({
      headers: [
        ['X-Tenant', 'acme'],
        ['x-api-key', 'top-secret'],
      ],
      auth: { type: 'bearer', token: 'bearer-secret' },
      timeoutMs: 2_000,
      tlsCa: null,
    });
    // Bound to the organization: copied into another one's endpoint, nothing opens.
    expect(() => sealer.open('org_b', stored)).toThrow();
  });

  it('keeps a stored sensitive value left out, removes with null, and stores null when empty', () => {
    const stored = sealer.seal(
      'org_a',
      { headers: [{ name: 'x-api-key', value: 'kept', sensitive: true }] },
      null,
      target,
    );
    const patched = sealer.seal(
      'org_a',
      { headers: [{ name: 'X-API-KEY', sensitive: true }] },
      stored,
      { ...target, urlChanged: false },
    )!;
    expect(sealer.open('org_a', patched).headers).toEqual([['X-API-KEY', 'kept']]);
    expect(sealer.seal('org_a', { headers: null }, patched, target)).toBeNull();
  });

  it('refuses kept auth on another host, and a timeout above the maximum', () => {
    const stored = sealer.seal(
      'org_a',
      { auth: { type: 'basic', username: 'u', password: 'p' } },
      null,
      target,
    );
    expect(() =>
      sealer.seal('org_a', {}, stored, { ...target, url: 'https://elsewhere.example/in' }),
    ).toThrow(expect.objectContaining({ code: 'CREDENTIALS_TARGET_CHANGED' }));
    expect(
      sealer.seal('org_a', {}, stored, { ...target, url: 'https://hooks.example/v2' }),
    ).toEqual(stored);
    expect(() => sealer.seal('org_a', { timeoutMs: 20_000 }, null, target)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });

  it('refuses secrets without a credentials key (FEATURE_NOT_AVAILABLE), plain headers still work', () => {
    const keyless = new ReceiverOptionsSealer({ key: undefined });
    expect(() =>
      keyless.seal('org_a', { auth: { type: 'bearer', token: 't' } }, null, target),
    ).toThrow(expect.objectContaining({ code: 'FEATURE_NOT_AVAILABLE' }));
    expect(
      keyless.seal(
        'org_a',
        { headers: [{ name: 'x-a', value: 'b', sensitive: false }] },
        null,
        target,
      ),
    ).toEqual({ headers: [{ name: 'x-a', value: 'b' }] });
  });
});
