import type { ComponentChildren } from 'preact';

export interface Column<T> {
  label: string;
  cell: (row: T) => ComponentChildren;
}

/**
 * A captioned table; on a phone each row becomes a card of label: value lines (styles.css). With
 * no rows it says `empty` only when the list was read: not while it loads, nor when reading it
 * failed (the view's alert says why; "nothing waits" beside it would be false).
 */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  empty,
  state,
}: {
  caption: string;
  columns: Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  empty: string;
  /** The load behind `rows` (useLoad's answer). */
  state: { loading: boolean; error: string | null };
}) {
  if (rows.length === 0) {
    if (state.error) return null;
    if (state.loading) return <p aria-busy="true">Loading…</p>;
    return <p class="empty">{empty}</p>;
  }
  return (
    <div class="table-scroll">
      <table class="striped">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c.label}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.label} data-label={c.label}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
