import { FormEvent, useState } from 'react';
import { ApiError, Organization, request, Session } from './api';
import { ErrorBox, Field } from './ui';

/**
 * Sign in with an API key (and its organization's id), or with the admin token: then pick an
 * organization from the list, open one by id or create one, and the dashboard makes itself an API
 * key for it.
 */
export function SignIn(props: { notice: string | null; onSignedIn: (session: Session) => void }) {
  const [mode, setMode] = useState<'key' | 'admin'>('key');
  const [apiKey, setApiKey] = useState('');
  const [organizationId, setOrganizationId] = useState('');
  const [adminToken, setAdminToken] = useState('');
  const [orgChoice, setOrgChoice] = useState<'pick' | 'open' | 'create'>('create');
  const [orgs, setOrgs] = useState<Organization[] | null>(null);
  const [orgsNext, setOrgsNext] = useState<string | null>(null);
  const [picked, setPicked] = useState('');
  const [orgName, setOrgName] = useState('');
  const [plan, setPlan] = useState('free');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function signInWithKey(key: string, orgId: string) {
    const org = await request<Organization>(
      'GET',
      `/api/organizations/${encodeURIComponent(orgId)}`,
      key,
    );
    props.onSignedIn({
      apiKey: key,
      organizationId: org.data.id,
      organizationName: org.data.name,
      plan: org.data.plan,
    });
  }

  /** The admin's list of organizations, 50 at a time; asked for on a click, not per keystroke. */
  async function loadOrganizations(more: boolean) {
    setError(null);
    setBusy(true);
    try {
      const query = new URLSearchParams({ limit: '50' });
      if (more && orgsNext) query.set('cursor', orgsNext);
      const page = await request<Organization[]>(
        'GET',
        `/api/organizations?${query.toString()}`,
        adminToken,
      );
      const listed = more && orgs ? [...orgs, ...page.data] : page.data;
      setOrgs(listed);
      setOrgsNext(page.nextCursor ?? null);
      if (!picked && listed.length > 0) setPicked(listed[0].id);
    } catch (caught) {
      setError(refusal(caught));
    } finally {
      setBusy(false);
    }
  }

  function refusal(caught: unknown) {
    return caught instanceof ApiError && caught.status === 401
      ? new Error(
          mode === 'key'
            ? 'That API key was refused. Check the key, or ask an admin for a new one.'
            : 'That admin token was refused. It is printed by `npm start` (or set in HOOKBASE_ADMIN_TOKEN).',
        )
      : caught;
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      if (mode === 'key') {
        await signInWithKey(apiKey.trim(), organizationId.trim());
        return;
      }
      let orgId = orgChoice === 'pick' ? picked : organizationId.trim();
      if (orgChoice === 'create') {
        const created = await request<Organization>('POST', '/api/organizations', adminToken, {
          name: orgName,
          plan,
        });
        orgId = created.data.id;
      }
      const issued = await request<{ key: string }>(
        'POST',
        `/api/organizations/${encodeURIComponent(orgId)}/api-keys`,
        adminToken,
        { name: 'dashboard session' },
      );
      await signInWithKey(issued.data.key, orgId);
    } catch (caught) {
      setError(refusal(caught));
    } finally {
      setBusy(false);
    }
  }

  const issueFor = (path: string) =>
    error instanceof ApiError ? error.issues.find((i) => i.path === path)?.message : undefined;

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Hookbase</h1>
      {props.notice ? (
        <div className="notice" role="status">
          {props.notice}
        </div>
      ) : null}
      <div role="radiogroup" aria-label="Sign in with" className="segmented">
        <label>
          <input
            type="radio"
            name="mode"
            checked={mode === 'key'}
            onChange={() => setMode('key')}
          />
          API key
        </label>
        <label>
          <input
            type="radio"
            name="mode"
            checked={mode === 'admin'}
            onChange={() => setMode('admin')}
          />
          Admin token
        </label>
      </div>
      <form onSubmit={submit} className="card">
        {mode === 'key' ? (
          <>
            <Field label="API key" hint="Kept in this tab's session storage only.">
              {({ id, describedBy }) => (
                <input
                  id={id}
                  aria-describedby={describedBy}
                  type="password"
                  autoComplete="off"
                  required
                  value={apiKey}
                  onChange={(e) => setApiKey(e.target.value)}
                />
              )}
            </Field>
            <Field label="Organization ID" hint="Starts with org_.">
              {({ id, describedBy }) => (
                <input
                  id={id}
                  aria-describedby={describedBy}
                  required
                  value={organizationId}
                  onChange={(e) => setOrganizationId(e.target.value)}
                />
              )}
            </Field>
          </>
        ) : (
          <>
            <Field label="Admin token" hint="Printed by npm start, or HOOKBASE_ADMIN_TOKEN.">
              {({ id, describedBy }) => (
                <input
                  id={id}
                  aria-describedby={describedBy}
                  type="password"
                  autoComplete="off"
                  required
                  value={adminToken}
                  onChange={(e) => setAdminToken(e.target.value)}
                />
              )}
            </Field>
            <fieldset>
              <legend>Organization</legend>
              <label className="inline">
                <input
                  type="radio"
                  name="org"
                  checked={orgChoice === 'create'}
                  onChange={() => setOrgChoice('create')}
                />
                Create a new organization
              </label>
              <label className="inline">
                <input
                  type="radio"
                  name="org"
                  checked={orgChoice === 'pick'}
                  onChange={() => setOrgChoice('pick')}
                />
                Pick an existing one from the list
              </label>
              <label className="inline">
                <input
                  type="radio"
                  name="org"
                  checked={orgChoice === 'open'}
                  onChange={() => setOrgChoice('open')}
                />
                Open an existing one by ID
              </label>
              {orgChoice === 'create' ? (
                <>
                  <Field label="Organization name" error={issueFor('name')}>
                    {({ id, describedBy, invalid }) => (
                      <input
                        id={id}
                        aria-describedby={describedBy}
                        aria-invalid={invalid}
                        required
                        value={orgName}
                        onChange={(e) => setOrgName(e.target.value)}
                      />
                    )}
                  </Field>
                  <Field label="Plan" hint="FIFO ordering needs the pro or business plan.">
                    {({ id, describedBy }) => (
                      <select
                        id={id}
                        aria-describedby={describedBy}
                        value={plan}
                        onChange={(e) => setPlan(e.target.value)}
                      >
                        <option value="free">free</option>
                        <option value="pro">pro</option>
                        <option value="business">business</option>
                      </select>
                    )}
                  </Field>
                </>
              ) : orgChoice === 'pick' ? (
                <>
                  {orgs === null ? (
                    <p className="hint">Enter the admin token, then load the organizations.</p>
                  ) : orgs.length === 0 ? (
                    <p className="hint">No organizations yet: create one instead.</p>
                  ) : (
                    <Field label="Choose an organization">
                      {({ id }) => (
                        <select
                          id={id}
                          required
                          value={picked}
                          onChange={(e) => setPicked(e.target.value)}
                        >
                          {orgs.map((org) => (
                            <option key={org.id} value={org.id}>
                              {org.name} ({org.plan}) · {org.id}
                            </option>
                          ))}
                        </select>
                      )}
                    </Field>
                  )}
                  <button
                    type="button"
                    disabled={busy || !adminToken}
                    onClick={() => void loadOrganizations(false)}
                  >
                    {orgs === null ? 'Load organizations' : 'Reload organizations'}
                  </button>
                  {orgsNext ? (
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() => void loadOrganizations(true)}
                    >
                      Load more
                    </button>
                  ) : null}
                </>
              ) : (
                <Field label="Organization ID">
                  {({ id }) => (
                    <input
                      id={id}
                      required
                      value={organizationId}
                      onChange={(e) => setOrganizationId(e.target.value)}
                    />
                  )}
                </Field>
              )}
            </fieldset>
          </>
        )}
        <ErrorBox error={error} />
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
