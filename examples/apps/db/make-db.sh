#!/bin/sh
# The database service's setup: a fresh cluster in $PGROOT (a folder of its own under /tmp, reachable by the
# postgres user wherever the suite is), and in it the template every server's trials start from: TechEmpower's
# `world` (10,000 rows of a random number, the same ones every run) and `fortune` tables (seed.sql). The
# service's reset copies it into `bench` before each server starts.
set -e
sh cluster.sh bench_template
# The servers' verify command counts the app's statements (did-the-work.sh); the service loads the library.
echo "CREATE EXTENSION pg_stat_statements" | sh pg.sh postgres --single -D data postgres > /dev/null
sh pg.sh postgres --single -j -D data bench_template < seed.sql > /dev/null
# The app servers may be on another machine of the same network (examples/hosts/three-machines.toml).
echo "host all all samenet trust" >> "$PGROOT/data/pg_hba.conf"
echo "ALTER DATABASE bench_template WITH IS_TEMPLATE true ALLOW_CONNECTIONS false" |
  sh pg.sh postgres --single -D data postgres > /dev/null
