/**
 * Offset paging of a list the API counts: "Showing 51–100 of 230", with Previous and Next.
 * Nothing when the whole list fits on one page.
 */
export function Pager({
  label,
  offset,
  limit,
  shown,
  count,
  onOffset,
}: {
  /** What is paged ("chain runs"), for the buttons' names. */
  label: string;
  offset: number;
  limit: number;
  shown: number | undefined;
  count: number | undefined;
  onOffset: (offset: number) => void;
}) {
  if (shown === undefined || count === undefined || (offset === 0 && count <= shown)) return null;
  return (
    <nav class="toolbar" aria-label={`Pages of ${label}`}>
      <span class="note">
        Showing {shown === 0 ? 0 : offset + 1}–{offset + shown} of {count}.
      </span>
      <button type="button" class="secondary" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <button type="button" class="secondary" disabled={offset + limit >= count} onClick={() => onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  );
}
