import { ReactNode, useEffect, useId, useRef } from 'react';
import { ApiError } from './api';

/** A modal built on <dialog>: focus stays inside, Escape closes it. */
export function Dialog(props: { title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
    >
      <div className="dialog-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" className="link" onClick={props.onClose}>
          Close
        </button>
      </div>
      {props.children}
    </dialog>
  );
}

/** A labelled form control with its hint and its error (from the API) right below it. */
export function Field(props: {
  label: string;
  error?: string;
  hint?: ReactNode;
  children: (ids: { id: string; describedBy?: string; invalid: boolean }) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [props.hint ? hintId : '', props.error ? errorId : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div className={props.error ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{props.label}</label>
      {props.children({ id, describedBy: describedBy || undefined, invalid: !!props.error })}
      {props.hint ? (
        <div className="hint" id={hintId}>
          {props.hint}
        </div>
      ) : null}
      {props.error ? (
        <div className="field-error" id={errorId} role="alert">
          {props.error}
        </div>
      ) : null}
    </div>
  );
}

export function ErrorBox(props: { error: unknown; next?: string }) {
  if (!props.error) return null;
  const error = props.error;
  const text =
    error instanceof ApiError
      ? `${error.message} (${error.code})`
      : error instanceof Error
        ? error.message
        : String(error);
  return (
    <div className="error-box" role="alert">
      <p>{text}</p>
      {props.next ? <p>{props.next}</p> : null}
    </div>
  );
}

export function Badge(props: { tone?: 'good' | 'warn' | 'bad' | 'info'; children: ReactNode }) {
  return <span className={`badge ${props.tone ?? 'info'}`}>{props.children}</span>;
}

export const statusTone = (status: string): 'good' | 'warn' | 'bad' | 'info' =>
  status === 'active' || status === 'succeeded'
    ? 'good'
    : status === 'paused' || status === 'awaiting_retry' || status === 'fifo_waiting'
      ? 'warn'
      : status === 'disabled' || status === 'failed' || status === 'expired'
        ? 'bad'
        : 'info';
