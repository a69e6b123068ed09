// A loopback HTTP proxy that adds `Authorization: Bearer TOKEN` to every request: the
// conformance suite's client sends no credentials, and corral serve on TCP requires them.
// Prints the port it listens on, then forwards (streaming both ways) until killed.
//   node auth_proxy.mjs http://127.0.0.1:PORT TOKEN
import http from "node:http";

const [target, token] = process.argv.slice(2);
const upstream = new URL(target);
const server = http.createServer((req, res) => {
  const headers = { ...req.headers, host: upstream.host, authorization: `Bearer ${token}` };
  const out = http.request(
    { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
    (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    },
  );
  out.on("error", (e) => {
    res.writeHead(502, { "content-type": "text/plain" });
    res.end(`proxy: ${e.message}`);
  });
  req.pipe(out);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
