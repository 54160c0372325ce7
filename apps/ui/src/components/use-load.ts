import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs `load` now and whenever `deps` change or `reload` is called; the last answer wins. New
 * inputs clear the old data (a page of other filters must not show under the new ones); a reload
 * keeps it on screen until the answer comes.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [generation, setGeneration] = useState(0);
  const lastGeneration = useRef(generation);
  useEffect(() => {
    let current = true;
    const reloading = lastGeneration.current !== generation;
    lastGeneration.current = generation;
    setState((s) => ({ data: reloading ? s.data : undefined, error: null, loading: true }));
    load().then(
      (data) => current && setState({ data, error: null, loading: false }),
      (err: unknown) => current && setState((s) => ({ data: s.data, error: messageOf(err), loading: false })),
    );
    return () => {
      current = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

export interface Action {
  busy: boolean;
  error: string | null;
  /** What the last action that worked did, for the view's status region ("Approved wire …"). */
  done: string | null;
  /**
   * Runs `act` unless one is running (buttons stay focusable; a second press is ignored); `done`
   * is announced when it works, a fixed text or one made from what `act` answered.
   */
  run: <T>(act: () => Promise<T>, done?: string | ((result: T) => string)) => Promise<boolean>;
}

export function useAction(): Action {
  const [state, setState] = useState<{ busy: boolean; error: string | null; done: string | null }>({ busy: false, error: null, done: null });
  const busy = useRef(false);
  const run = useCallback(async <T>(act: () => Promise<T>, done?: string | ((result: T) => string)) => {
    if (busy.current) return false;
    busy.current = true;
    setState({ busy: true, error: null, done: null });
    try {
      const result = await act();
      setState({ busy: false, error: null, done: (typeof done === 'function' ? done(result) : done) ?? null });
      return true;
    } catch (err) {
      setState({ busy: false, error: messageOf(err), done: null });
      return false;
    } finally {
      busy.current = false;
    }
  }, []);
  return { ...state, run };
}
