#!/bin/sh
# A fresh PostgreSQL cluster for an example suite's database service: made in $PGROOT (a folder of its own under
# /tmp, handed to the postgres user when run as root, since PostgreSQL refuses root), trusting every local
# connection (a benchmark's database holds nothing to protect), with each argument made a database in it.
set -e
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$PGROOT"
mkdir -p "$PGROOT"
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$PGROOT"
fi
sh "$here/pg.sh" initdb -D data --auth=trust -U postgres -E UTF8 --locale=C.UTF-8 -N > /dev/null
for database in "$@"; do
  echo "CREATE DATABASE $database" | sh "$here/pg.sh" postgres --single -D data postgres > /dev/null
done
