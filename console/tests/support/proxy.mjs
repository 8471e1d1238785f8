/**
 * A TCP proxy on loopback in front of the server, whose connections a test
 * can cut at will (`drop`): a dropped event stream, as a flaky network
 * would drop it, for the console to resume with Last-Event-ID.
 */

import net from "node:net";

export async function startProxy(target) {
  const to = new URL(target);
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(to.port), to.hostname);
    sockets.add(client);
    sockets.add(upstream);
    const done = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", done).on("close", done);
    upstream.on("error", done).on("close", done);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** Cuts every connection open now; returns how many sockets were cut. */
    drop() {
      const n = sockets.size;
      for (const s of [...sockets]) s.destroy();
      sockets.clear();
      return n;
    },
    close() {
      this.drop();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
