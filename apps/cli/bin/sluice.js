#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in ../dist (built by `npm install` via the root prepare script).
import { main } from '../dist/index.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    // Start-up failed (e.g. Redis unreachable): exit even if a client still holds the event loop open.
    console.error(`sluice: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
