// The example app on Node's own HTTP server, one process: `node plain.js PORT`.
const http = require("http");
const { page } = require("./handler");

http
  .createServer((request, response) => {
    response.setHeader("content-type", "application/json");
    response.end(page(request.url));
  })
  .listen(Number(process.argv[2]), "127.0.0.1");
