/**
 * Rollup cells (a tuple's keys in one time bucket) kept by tuple hash and bucket number, so the
 * records of one tuple and hour reuse one set of shared keys instead of building and rendering
 * them again: a gateway sees few distinct tuples. Cleared when `limit` cells are held.
 */
export class CellMemo<T> {
  private readonly byHash = new Map<string, Map<number, T>>();
  private size = 0;

  constructor(private readonly limit = 4096) {}

  get(hash: string, bucket: number): T | undefined {
    return this.byHash.get(hash)?.get(bucket);
  }

  set(hash: string, bucket: number, cell: T): T {
    if (this.size >= this.limit) {
      this.byHash.clear();
      this.size = 0;
    }
    let cells = this.byHash.get(hash);
    if (cells === undefined) {
      cells = new Map();
      this.byHash.set(hash, cells);
    }
    cells.set(bucket, cell);
    this.size++;
    return cell;
  }
}
