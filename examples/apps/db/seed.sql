SELECT setseed(0.25);

CREATE TABLE world (id integer PRIMARY KEY, randomnumber integer NOT NULL);

INSERT INTO world SELECT i, 1 + floor(random() * 10000)::integer FROM generate_series(1, 10000) AS i;

CREATE TABLE fortune (id integer PRIMARY KEY, message varchar(2048) NOT NULL);

-- Twelve messages of this project's own, as the fortunes page has them: one to escape, one beyond ASCII.
INSERT INTO fortune VALUES
  (1, 'The median of three repeats beats the best of one.'),
  (2, 'A client at 100% CPU measures itself.'),
  (3, 'Warm the server up, then start the clock.'),
  (4, 'Latency is measured from when the request was due, not from when it was sent.'),
  (5, 'Every server meets the same data: reset the database before each one.'),
  (6, 'A pool of five connections serves five threads, not fifty.'),
  (7, 'Pin the client and the server to different cores.'),
  (8, 'Throughput without latency is half a figure.'),
  (9, 'The knee is where another user stops adding requests per second.'),
  (10, 'Errors answered fast are still errors.'),
  (11, '<script>alert("a fortune is text, never markup");</script>'),
  (12, 'Überall dieselben Daten: 同じデータで比べる');

