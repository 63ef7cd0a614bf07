// The example app on Express (installed by `npm install` in this folder): `node express.js PORT`.
const express = require("express");
const { page } = require("./handler");

const app = express();
app.get("*splat", (request, response) => {
  response.type("application/json").send(page(request.url));
});
app.listen(Number(process.argv[2]), "127.0.0.1");
