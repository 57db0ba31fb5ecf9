import {
  isWellFormedPortalToken,
  portalFrameAncestors,
  portalSettingsSchema,
  PORTAL_TOKEN_MAX_SECONDS,
  portalAccessSchema,
  portalDecision,
  portalUrl,
} from './portal-access';

const TOKEN = `hbp_${'A'.repeat(43)}`;

describe('portal tokens', () => {
  it('are hbp_ and 43 base64url characters', () => {
    expect(isWellFormedPortalToken(TOKEN)).toBe(true);
    expect(isWellFormedPortalToken(`hbp_${'a-_'.repeat(14)}z`)).toBe(true);
    expect(isWellFormedPortalToken(`hbp_${'A'.repeat(42)}`)).toBe(false);
    expect(isWellFormedPortalToken(`hb_${'A'.repeat(44)}`)).toBe(false);
    expect(isWellFormedPortalToken(`hbp_${'A'.repeat(42)}=`)).toBe(false);
  });

  it('last an hour by default and at most seven days', () => {
    expect(portalAccessSchema.parse({})).toEqual({ expiresInSeconds: 3600, readOnly: false });
    expect(portalAccessSchema.parse({ expiresInSeconds: 60, readOnly: true })).toEqual({
      expiresInSeconds: 60,
      readOnly: true,
    });
    expect(
      portalAccessSchema.safeParse({ expiresInSeconds: PORTAL_TOKEN_MAX_SECONDS }).success,
    ).toBe(true);
    expect(
      portalAccessSchema.safeParse({ expiresInSeconds: PORTAL_TOKEN_MAX_SECONDS + 1 }).success,
    ).toBe(false);
    expect(portalAccessSchema.safeParse({ expiresInSeconds: 0 }).success).toBe(false);
    expect(portalAccessSchema.safeParse({ expiresInSeconds: 1.5 }).success).toBe(false);
    expect(portalAccessSchema.safeParse({ other: 1 }).success).toBe(false);
  });
});

describe('portalDecision', () => {
  it.each([
    [false, 'GET', false, 'not_found'],
    [false, 'POST', false, 'not_found'],
    [false, 'GET', true, 'not_found'],
    [false, 'DELETE', true, 'not_found'],
    [true, 'GET', false, 'allow'],
    [true, 'POST', false, 'allow'],
    [true, 'PATCH', false, 'allow'],
    [true, 'DELETE', false, 'allow'],
    [true, 'GET', true, 'allow'],
    [true, 'head', true, 'allow'],
    [true, 'POST', true, 'read_only'],
    [true, 'PATCH', true, 'read_only'],
    [true, 'DELETE', true, 'read_only'],
    [true, 'PUT', true, 'read_only'],
  ] as const)(
    'scoped %p, %s, read-only %p: %s',
    (applicationScoped, method, readOnly, expected) => {
      expect(portalDecision({ applicationScoped }, method, readOnly)).toBe(expected);
    },
  );

  it.each([
    [false, 'GET', false, 'not_found'],
    [false, 'GET', true, 'not_found'],
    [true, 'GET', false, 'allow'],
    [true, 'HEAD', false, 'allow'],
    [true, 'GET', true, 'read_only'],
    [true, 'HEAD', true, 'read_only'],
    [true, 'POST', true, 'read_only'],
    [true, 'POST', false, 'allow'],
  ] as const)(
    'a read that changes something (polling): scoped %p, %s, read-only %p: %s',
    (applicationScoped, method, readOnly, expected) => {
      expect(portalDecision({ applicationScoped, readChanges: true }, method, readOnly)).toBe(
        expected,
      );
    },
  );
});

describe('portalUrl', () => {
  it('puts the token in the fragment of the portal page', () => {
    expect(portalUrl('https://hooks.example.com/', 'org_1', TOKEN)).toBe(
      `https://hooks.example.com/dashboard/portal/org_1#token=${TOKEN}`,
    );
    expect(portalUrl('http://127.0.0.1:3000', 'org_1', TOKEN)).toBe(
      `http://127.0.0.1:3000/dashboard/portal/org_1#token=${TOKEN}`,
    );
  });
});

describe('portal settings', () => {
  it('take branding and origins, refusing anything that could break out of the CSP', () => {
    expect(
      portalSettingsSchema.safeParse({
        displayName: 'Acme',
        logoUrl: 'https://cdn.example.com/logo.png',
        primaryColor: '#3366ff',
        allowedOrigins: ['https://app.example.com', 'http://127.0.0.1:8080'],
      }).success,
    ).toBe(true);
    expect(portalSettingsSchema.safeParse(null).success).toBe(true);
    for (const origin of [
      'https://app.example.com/path',
      "https://a.com; script-src 'unsafe-inline'",
      '*',
      'https://a.com https://b.com',
      'javascript:alert(1)',
    ]) {
      expect(portalSettingsSchema.safeParse({ allowedOrigins: [origin] }).success).toBe(false);
    }
    expect(portalSettingsSchema.safeParse({ primaryColor: 'red' }).success).toBe(false);
    expect(portalSettingsSchema.safeParse({ logoUrl: 'javascript:alert(1)' }).success).toBe(false);
  });

  it('frame the portal only from the allowed origins, by default from none', () => {
    expect(portalFrameAncestors(null)).toBe("frame-ancestors 'none'");
    expect(portalFrameAncestors({ allowedOrigins: [] })).toBe("frame-ancestors 'none'");
    expect(portalFrameAncestors({ allowedOrigins: ['https://a.com', 'http://b.com:81'] })).toBe(
      'frame-ancestors https://a.com http://b.com:81',
    );
  });
});
