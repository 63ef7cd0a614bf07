#!/bin/sh
# Prepares a private run directory for one server of the static shootout: the 1 MiB file (made once), and for
# nginx its configuration with the port filled in. Usage: setup-server.sh nginx|apache PORT
set -eu
cd "$(dirname "$0")"
[ -f www/1mb.bin ] || head -c 1048576 /dev/urandom > www/1mb.bin
run="/tmp/shootout-$1-$2"
mkdir -p "$run"
if [ "$1" = nginx ]; then
  sed -e "s|@PORT@|$2|" -e "s|@RUN@|$run|" -e "s|@ROOT@|$PWD/www|" nginx.conf.in > "$run/nginx.conf"
fi
