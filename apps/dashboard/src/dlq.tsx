import { useCallback, useEffect, useState } from 'react';
import { Client, DlqEntry } from './api';
import { time } from './format';
import { navigate, hrefOf } from './router';
import { ErrorBox } from './ui';

const REASONS = [
  'max_attempts',
  'max_age',
  'permanent_failure',
  'endpoint_deleted',
  'circuit_open',
  'fifo_expired',
];

export function DlqPage(props: { client: Client }) {
  const { client } = props;
  const [reason, setReason] = useState('');
  const [entries, setEntries] = useState<DlqEntry[] | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const query = reason ? `?reason=${reason}&limit=100` : '?limit=100';
      setEntries(await client.get<DlqEntry[]>(`/dlq${query}`));
      setError(null);
    } catch (caught) {
      setError(caught);
    }
  }, [client, reason]);
  useEffect(() => {
    void load();
  }, [load]);

  async function retry(ids: string[]) {
    setNotice(null);
    setError(null);
    let done = 0;
    for (const id of ids) {
      try {
        await client.post(`/dlq/${id}/retry`);
        done += 1;
      } catch (caught) {
        setError(caught);
      }
    }
    setSelected(new Set());
    setNotice(`${done} of ${ids.length} entr${ids.length === 1 ? 'y' : 'ies'} sent again.`);
    await load();
  }

  const pending = entries?.filter((entry) => !entry.retriedAt) ?? [];
  return (
    <section>
      <div className="page-head">
        <h1>Dead-letter queue</h1>
        <label className="inline">
          Reason{' '}
          <select value={reason} onChange={(e) => setReason(e.target.value)}>
            <option value="">Any reason</option>
            {REASONS.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
        <button
          type="button"
          disabled={selected.size === 0}
          onClick={() => void retry([...selected])}
        >
          Retry selected ({selected.size})
        </button>
      </div>
      {notice ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorBox error={error} />
      {entries?.length === 0 ? (
        <div className="empty">
          <p>The DLQ is empty: every message was delivered or is still being tried.</p>
        </div>
      ) : null}
      {entries && entries.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">
              Dead-lettered messages ({pending.length} not yet retried)
            </caption>
            <thead>
              <tr>
                <th scope="col">
                  <span className="visually-hidden">Select</span>
                </th>
                <th scope="col">Message</th>
                <th scope="col">Event type</th>
                <th scope="col">Reason</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last error</th>
                <th scope="col">Dead-lettered</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr key={entry.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${entry.messageId}`}
                      disabled={!!entry.retriedAt}
                      checked={selected.has(entry.id)}
                      onChange={(e) => {
                        const next = new Set(selected);
                        if (e.target.checked) next.add(entry.id);
                        else next.delete(entry.id);
                        setSelected(next);
                      }}
                    />
                  </td>
                  <td>
                    <a
                      href={hrefOf(`/messages/${entry.messageId}`)}
                      onClick={(event) => {
                        event.preventDefault();
                        navigate(`/messages/${entry.messageId}`);
                      }}
                    >
                      {entry.messageId}
                    </a>
                  </td>
                  <td>{entry.eventType}</td>
                  <td>{entry.reason}</td>
                  <td>{entry.attempts}</td>
                  <td className="wrap">
                    {entry.lastResponseStatus ?? ''} {entry.lastError ?? ''}
                  </td>
                  <td>{time(entry.createdAt)}</td>
                  <td>
                    {entry.retriedAt ? (
                      <span>Retried {time(entry.retriedAt)}</span>
                    ) : (
                      <button
                        type="button"
                        aria-label={`Retry ${entry.messageId}`}
                        onClick={() => void retry([entry.id])}
                      >
                        Retry
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
