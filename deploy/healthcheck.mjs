// Container health check: exits 0 when the URL answers 2xx within the timeout, 1 otherwise.
//   node /app/deploy/healthcheck.mjs [URL]
// Default URL: the API's liveness endpoint, http://127.0.0.1:${SLUICE_SERVER__PORT:-8080}/health.
// Worker containers pass their own health server: http://127.0.0.1:9091/ready (as docker-compose.yml does).
// Plain Node (global fetch), so the image needs no curl or wget.
const url = process.argv[2] ?? `http://127.0.0.1:${process.env.SLUICE_SERVER__PORT ?? 8080}/health`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(2500) });
  if (!res.ok) console.error(`healthcheck: ${url} answered ${res.status}`);
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  console.error(`healthcheck: ${url}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
