/** Reads the view's list again (filters and page kept); aria-busy while it loads. */
export function RefreshButton({ load }: { load: { loading: boolean; reload: () => void } }) {
  return (
    <button type="button" class="secondary" onClick={load.reload} aria-busy={load.loading}>
      Refresh
    </button>
  );
}
