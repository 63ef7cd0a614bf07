#!/bin/sh
# The database service's setup for examples/redmine.toml: a fresh PostgreSQL cluster in $PGROOT (a folder of its
# own under /tmp), started for a moment on the service's port to make `redmine_template`: Redmine's migrations,
# its default data (trackers, statuses, roles) and this project's generated data (generate.rb: users, projects,
# issues with journals), then stopped. The service's reset copies the template into `redmine` before each server.
# $1 is the port.
#
# Making it takes about a minute, the same for every suite and run (generate.rb seeds its random numbers), so the
# database made is kept as a dump in the user's cache folder (`$XDG_CACHE_HOME/shootout`, else ~/.cache/shootout),
# named by a digest of what made it: this script, generate.rb, and Redmine's and PostgreSQL's versions. A later
# setup with the same digest restores that dump in seconds; a change to any of them makes the database anew.
# Delete the folder to make it anew anyway.
set -e
here="$(pwd)"
pg="sh $here/../db/pg.sh"
sh ../db/cluster.sh redmine_template
$pg pg_ctl -D data -o "-p $1 -c listen_addresses=127.0.0.1 -c unix_socket_directories=" -w -l "$PGROOT/setup.log" start
trap '$pg pg_ctl -D data -m fast -w stop > /dev/null' EXIT
cache="${XDG_CACHE_HOME:-$HOME/.cache}/shootout"
digest="$({ cat make-db.sh generate.rb; dpkg-query -W -f '${Version}' redmine; $pg postgres --version; } |
  sha256sum | cut -c1-16)"
dump="$cache/redmine-$digest.dump"
connect="-h 127.0.0.1 -p $1 -U postgres"
if [ -s "$dump" ]; then
  $pg pg_restore $connect -d redmine_template --exit-on-error < "$dump"
  echo "make-db: restored Redmine's database from $dump"
else
  (
    cd /usr/share/redmine
    export DATABASE_URL="postgres://postgres@127.0.0.1:$1/redmine_template"
    export RAILS_ENV=production REDMINE_INSTANCE=default
    bundle exec rake db:migrate > /dev/null
    REDMINE_LANG=en bundle exec rake redmine:load_default_data > /dev/null
    bundle exec rails runner "$here/generate.rb"
  )
  # Kept only whole: a dump cut short by a full disk or a signal is never restored.
  if mkdir -p "$cache" && $pg pg_dump $connect -F c redmine_template > "$dump.$$"; then
    mv "$dump.$$" "$dump"
  else
    rm -f "$dump.$$"
    echo "make-db: could not keep Redmine's database in $cache; the next setup makes it again" >&2
  fi
fi
psql -q $connect -c "ALTER DATABASE redmine_template WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"
