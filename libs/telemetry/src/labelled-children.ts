/** Label sets cached per metric family; past this many, calls go through prom-client uncached. */
const MAX_CACHED_LABEL_SETS = 1000;

/**
 * The labelled children of the per-request metrics, built once per label set: prom-client builds
 * and checks a label object (and, for histograms, a closure) on every call with an object.
 */
export class LabelledChildren<T> {
  private readonly children = new Map<string, T>();

  constructor(private readonly make: (key: string) => T) {}

  get(key: string): T {
    let child = this.children.get(key);
    if (child === undefined) {
      child = this.make(key);
      if (this.children.size < MAX_CACHED_LABEL_SETS) this.children.set(key, child);
    }
    return child;
  }
}
