#!/bin/sh
# A build step of examples/redmine.toml (scripts/setup-examples.sh runs it after the install): Debian's Redmine
# reads which database gems to load from its instance's database.yml, which its package writes on install. Where
# that file is missing (removed by hand, or the package's configuration skipped), it is written again as the
# package writes it, for PostgreSQL; the suite's servers give the real address in DATABASE_URL.
set -e
config=/etc/redmine/default/database.yml
if [ -f "$config" ]; then
  exit 0
fi
mkdir -p /etc/redmine/default
printf 'production:\n  adapter: postgresql\n  database: redmine_default\n  host: localhost\n  encoding: utf8\n' > "$config"
echo "configure.sh: wrote $config (adapter postgresql), which the redmine package had not"
