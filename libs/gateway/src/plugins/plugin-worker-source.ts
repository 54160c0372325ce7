/**
 * The code of a plugin worker thread, run with `eval` so it needs no file of its own (the same in
 * the sources and the build). It instantiates modules with no imports at all, and runs one call at
 * a time: the input JSON is copied into the module's memory at `alloc(len)`, the function returns
 * `(ptr << 32) | len` of its UTF-8 JSON answer. The parent terminates a thread that runs too long.
 */
export const PLUGIN_WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const instances = new Map();
const encoder = new TextEncoder();
const decoder = new TextDecoder();
parentPort.on('message', (msg) => {
  if (msg.type === 'load') {
    try {
      const instance = new WebAssembly.Instance(new WebAssembly.Module(msg.bytes), {});
      const memory = instance.exports.memory;
      const memoryBytes = memory instanceof WebAssembly.Memory ? memory.buffer.byteLength : 0;
      instances.set(msg.name, instance);
      parentPort.postMessage({ id: msg.id, ok: true, memoryBytes });
    } catch (err) {
      parentPort.postMessage({ id: msg.id, ok: false, error: String(err && err.message || err) });
    }
    return;
  }
  if (msg.type === 'unload') {
    instances.delete(msg.name);
    return;
  }
  try {
    const instance = instances.get(msg.name);
    if (!instance) throw new Error('plugin ' + msg.name + ' is not loaded');
    const { memory, alloc } = instance.exports;
    const fn = instance.exports[msg.fn];
    if (typeof fn !== 'function') throw new Error('plugin ' + msg.name + ' has no function ' + msg.fn);
    if (!(memory instanceof WebAssembly.Memory) || typeof alloc !== 'function') throw new Error('plugin ' + msg.name + ' must export memory and alloc');
    const input = encoder.encode(msg.input);
    const ptr = alloc(input.length) >>> 0;
    new Uint8Array(memory.buffer, ptr, input.length).set(input);
    const packed = BigInt.asUintN(64, BigInt(fn(ptr, input.length)));
    const outPtr = Number(packed >> 32n);
    const outLen = Number(packed & 0xffffffffn);
    if (memory.buffer.byteLength > msg.memoryLimit) throw new Error('plugin ' + msg.name + ' grew its memory past the limit');
    const answer = JSON.parse(decoder.decode(new Uint8Array(memory.buffer, outPtr, outLen)));
    parentPort.postMessage({ id: msg.id, ok: true, answer });
  } catch (err) {
    parentPort.postMessage({ id: msg.id, ok: false, error: String(err && err.message || err) });
  }
});
`;
