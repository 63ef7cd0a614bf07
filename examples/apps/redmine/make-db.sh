#!/bin/sh
# The database service's setup for examples/redmine.toml: a fresh PostgreSQL cluster in $PGROOT (a folder of its
# own under /tmp), started for a moment on the service's port to make `redmine_template`: Redmine's migrations,
# its default data (trackers, statuses, roles) and this project's generated data (generate.rb: users, projects,
# issues with journals), then stopped. The service's reset copies the template into `redmine` before each server.
# $1 is the port.
set -e
pg="sh $(pwd)/../db/pg.sh"
sh ../db/cluster.sh redmine_template
$pg pg_ctl -D data -o "-p $1 -c listen_addresses=127.0.0.1 -c unix_socket_directories=" -w -l "$PGROOT/setup.log" start
trap '$pg pg_ctl -D data -m fast -w stop > /dev/null' EXIT
generator="$(pwd)/generate.rb"
cd /usr/share/redmine
export DATABASE_URL="postgres://postgres@127.0.0.1:$1/redmine_template" RAILS_ENV=production REDMINE_INSTANCE=default
bundle exec rake db:migrate > /dev/null
REDMINE_LANG=en bundle exec rake redmine:load_default_data > /dev/null
bundle exec rails runner "$generator"
psql -q -h 127.0.0.1 -p "$1" -U postgres -c "ALTER DATABASE redmine_template WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"
