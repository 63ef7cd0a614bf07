#!/bin/sh
# The database service's reset for the Redmine suites: `redmine` copied anew from `redmine_template` (made by
# make-db.sh), so that every server starts from the same projects, issues and users, none of the issues an
# earlier server's writers filed. $1 is the port.
set -e
psql -q -h 127.0.0.1 -p "$1" -U postgres -d postgres -v ON_ERROR_STOP=1 \
  -c 'DROP DATABASE IF EXISTS redmine WITH (FORCE)' \
  -c 'CREATE DATABASE redmine TEMPLATE redmine_template'
