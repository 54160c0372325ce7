import type { Action } from './use-load.js';

/** An error the user should see, announced to screen readers. */
export function ErrorNote({ error }: { error: string | null | undefined }) {
  return error ? (
    <p role="alert" class="error-note">
      {error}
    </p>
  ) : null;
}

/**
 * What the view's last action did or why it failed. The status region is always in the page, so
 * screen readers announce the text that appears in it.
 */
export function ActionNotes({ action }: { action: Pick<Action, 'done' | 'error'> }) {
  return (
    <>
      <p role="status" class="done-note">
        {action.done ?? ''}
      </p>
      <ErrorNote error={action.error} />
    </>
  );
}

/** Says so when a list holds more than the page shows (the largest page is 1,000). */
export function PageNote({ shown, count }: { shown: number | undefined; count: number | undefined }) {
  return shown !== undefined && count !== undefined && count > shown ? (
    <p class="note">
      Showing the oldest {shown} of {count}.
    </p>
  ) : null;
}

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <section aria-label={label}>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling block must take focus to be scrolled from the keyboard */}
      <pre tabIndex={0}>
        <code>{JSON.stringify(value, null, 2)}</code>
      </pre>
    </section>
  );
}

/** A timestamp in the reader's locale, the RFC 3339 text kept as the machine-readable value. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span>—</span>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}
