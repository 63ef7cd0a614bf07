#!/bin/sh
# Runs one PostgreSQL program (initdb, postgres…) of the newest version installed, from $PGROOT (the folder that
# holds the cluster's data/), exec'd so that it is the service's own process. As root it runs as the postgres
# user, since PostgreSQL refuses root; setpriv execs too, so the postmaster keeps the PID shootout started.
set -e
program=$1
shift
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
cd "${PGROOT:-/}"
if [ "$(id -u)" = 0 ]; then
  exec setpriv --reuid=postgres --regid=postgres --clear-groups -- "$bin/$program" "$@"
fi
exec "$bin/$program" "$@"
