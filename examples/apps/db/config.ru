# A TechEmpower-style Rack app on PostgreSQL, for examples/db.toml: each request waits on the database, so the
# server's threads or processes, and the pool behind them, decide what it serves. Each thread (a Puma thread, a
# Unicorn worker) keeps one connection of its own, opened on its first request, with its statements prepared.
#   /db             one random row of `world`, as JSON
#   /queries?n=N    N random rows (1 to 500), as a JSON array
#   /fortunes       every `fortune` row plus one added, sorted by message, escaped into an HTML table
#   /updates?n=N    N random rows, each given a new random number and written back
# DATABASE_URL says where the database is (the suite fills in the service's port).
require "json"
require "pg"
require "erb"

module Bench
  URL = ENV.fetch("DATABASE_URL")

  def self.connection
    Thread.current[:bench_db] ||= PG.connect(URL).tap do |db|
      db.prepare("world", "SELECT id, randomnumber FROM world WHERE id = $1")
      db.prepare("update", "UPDATE world SET randomnumber = $2 WHERE id = $1")
      db.prepare("fortunes", "SELECT id, message FROM fortune")
    end
  end

  def self.random_id
    1 + rand(10_000)
  end

  def self.row(db)
    found = db.exec_prepared("world", [random_id]).first
    { "id" => found["id"].to_i, "randomNumber" => found["randomnumber"].to_i }
  end

  # The n of ?n=N, held to 1..500 as TechEmpower's rules have it.
  def self.count(env)
    n = Rack::Utils.parse_query(env["QUERY_STRING"])["n"].to_i
    n.clamp(1, 500)
  end

  def self.json(body)
    [200, { "content-type" => "application/json" }, [JSON.generate(body)]]
  end

  def self.fortunes(db)
    rows = db.exec_prepared("fortunes").map { |r| [r["id"].to_i, r["message"]] }
    rows << [0, "A fortune added while the page is made."]
    rows.sort_by! { |_, message| message }
    cells = rows.map { |id, message| "<tr><td>#{id}</td><td>#{ERB::Util.html_escape(message)}</td></tr>" }
    page = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>" \
           "<tr><th>id</th><th>message</th></tr>#{cells.join}</table></body></html>"
    [200, { "content-type" => "text/html; charset=utf-8" }, [page]]
  end

  def self.call(env)
    db = connection
    case env["PATH_INFO"]
    when "/db" then json(row(db))
    when "/queries" then json(Array.new(count(env)) { row(db) })
    when "/fortunes" then fortunes(db)
    when "/updates"
      rows = Array.new(count(env)) { row(db) }
      rows.each do |r|
        r["randomNumber"] = random_id
        db.exec_prepared("update", [r["id"], r["randomNumber"]])
      end
      json(rows)
    else [404, { "content-type" => "text/plain" }, ["not found\n"]]
    end
  end
end

run Bench
