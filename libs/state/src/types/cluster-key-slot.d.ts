// The package ships no types; ioredis uses it to route commands, so slots agree with the client's.
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0..16383) of a key, honouring `{hash tags}`. */
  function calculateSlot(key: string | Buffer): number;
  export default calculateSlot;
}
