/**
 * Scenario (h)'s load balancer: a minimal round-robin HTTP/1.1 reverse proxy over keep-alive
 * connection pools, one request per upstream in turn. Streams bodies both ways; strips
 * hop-by-hop headers. Usage:
 *   node --import tsx rr-proxy.ts --port N --upstream http://127.0.0.1:A --upstream http://127.0.0.1:B
 */
import http from 'node:http';
import { parseArgs } from 'node:util';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function forwardHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

function main(): void {
  const { values } = parseArgs({ options: { port: { type: 'string' }, upstream: { type: 'string', multiple: true } } });
  const upstreams = (values.upstream ?? []).map((u) => new URL(u));
  if (upstreams.length === 0) throw new Error('at least one --upstream is required');
  const agents = upstreams.map(() => new http.Agent({ keepAlive: true, maxSockets: 256 }));
  let next = 0;

  const server = http.createServer((req, res) => {
    const i = next;
    next = (next + 1) % upstreams.length;
    const target = upstreams[i] as URL;
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: forwardHeaders(req.headers), agent: agents[i] },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, forwardHeaders(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`upstream ${target.host}: ${err.message}`);
    });
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 65_000;
  const stop = () => {
    server.close();
    for (const agent of agents) agent.destroy();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  server.listen(Number(values.port ?? 8080), '127.0.0.1');
}

main();
