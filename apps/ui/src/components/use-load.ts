import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** What the page says when a call got no answer at all (the gateway down, the network away). */
export const UNREACHABLE = 'Gateway unreachable: the request got no answer (the gateway is down or the network is away).';

/**
 * An error's text for the page. fetch rejects with a bare TypeError when no answer came
 * ("Failed to fetch" in Chromium, "NetworkError…" in Firefox, "Load failed" in Safari).
 */
export function messageOf(err: unknown): string {
  if (err instanceof TypeError && /failed to fetch|networkerror|load failed/i.test(err.message)) return UNREACHABLE;
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
  /** The key of the act running (for aria-busy on the control that started it), null when none runs. */
  running: string | null;
  error: string | null;
  /** What the last action that worked did, for the view's status region ("Approved wire …"). */
  done: string | null;
  /**
   * Runs `act`; `done` is announced when it works, a fixed text or one made from what `act`
   * answered. One runs at a time: the view disables its controls while `busy` (controlFor), so a
   * second press cannot happen; a call made anyway (the same tick) is refused with an error shown.
   */
  run: <T>(act: () => Promise<T>, done?: string | ((result: T) => string), key?: string) => Promise<boolean>;
  /** Forgets the last error and done text (the input they were about has changed). */
  clear: () => void;
}

const IDLE = { busy: false, running: null, error: null, done: null };

export function useAction(): Action {
  const [state, setState] = useState<{ busy: boolean; running: string | null; error: string | null; done: string | null }>(IDLE);
  const busy = useRef(false);
  const run = useCallback(async <T>(act: () => Promise<T>, done?: string | ((result: T) => string), key?: string) => {
    if (busy.current) {
      setState((s) => ({ ...s, error: 'Another change is still running: try again when it ends.' }));
      return false;
    }
    busy.current = true;
    setState({ busy: true, running: key ?? null, error: null, done: null });
    try {
      const result = await act();
      setState({ ...IDLE, done: (typeof done === 'function' ? done(result) : done) ?? null });
      return true;
    } catch (err) {
      setState({ ...IDLE, error: messageOf(err) });
      return false;
    } finally {
      busy.current = false;
    }
  }, []);
  const clear = useCallback(() => setState((s) => (s.error === null && s.done === null ? s : { ...s, error: null, done: null })), []);
  return { ...state, run, clear };
}

/** A control of an action: disabled while any act of it runs, aria-busy on the one whose act it is. */
export function controlFor(action: Pick<Action, 'busy' | 'running'>, key: string): { disabled: boolean; 'aria-busy': boolean } {
  return { disabled: action.busy, 'aria-busy': action.running === key };
}
