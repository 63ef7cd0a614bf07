#!/bin/sh
# A server's verify command in db.toml: after its verification request, the database really ran the app's world
# lookup in `bench`, as pg_stat_statements counts it (per database: the reset made `bench` anew before this
# server started, so the count is this server's own). $1 is the database's port.
calls=$(psql -h 127.0.0.1 -p "$1" -U postgres -d postgres -tAc "SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'bench' AND s.query LIKE 'SELECT id, randomnumber FROM world WHERE id = %'")
if [ "${calls:-0}" -gt 0 ] 2>/dev/null; then
  echo "did-the-work: the database ran the world lookup $calls times for this server"
else
  echo "did-the-work: the database ran no world lookup in bench (pg_stat_statements says: ${calls:-nothing})" >&2
  exit 1
fi
