// The example app on node:cluster, WORKERS processes sharing one port: `node cluster.js PORT WORKERS`. The primary
// forks the workers and hands them connections; a worker that dies is not replaced, and SIGTERM to the primary
// stops them all.
const cluster = require("cluster");
const http = require("http");
const { page } = require("./handler");

const [port, workers] = [Number(process.argv[2]), Number(process.argv[3] || 2)];
if (cluster.isPrimary) {
  for (let i = 0; i < workers; i++) {
    cluster.fork();
  }
  process.on("SIGTERM", () => {
    for (const worker of Object.values(cluster.workers)) {
      worker.kill("SIGTERM");
    }
    process.exit(0);
  });
} else {
  http
    .createServer((request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(page(request.url));
    })
    .listen(port, "127.0.0.1");
}
