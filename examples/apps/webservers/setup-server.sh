#!/bin/sh
# Prepares a private run directory, /tmp/shootout-SERVER-PORT, for one server of the web-server shootouts: the
# 1 MiB file (made once, here), and per server its configuration with the port and paths filled in.
# Usage: setup-server.sh nginx|apache|tomcat|jetty PORT
set -eu
cd "$(dirname "$0")"
[ -f www/1mb.bin ] || head -c 1048576 /dev/urandom > www/1mb.bin
run="/tmp/shootout-$1-$2"
mkdir -p "$run"
case "$1" in
  nginx)
    sed -e "s|@PORT@|$2|" -e "s|@RUN@|$run|" -e "s|@ROOT@|$PWD/www|" nginx.conf.in > "$run/nginx.conf" ;;
  apache) ;;
  tomcat)
    # A CATALINA_BASE of our own; Debian's global web.xml declares the default (static) and JSP servlets.
    mkdir -p "$run/conf" "$run/logs" "$run/temp" "$run/work" "$run/webapps/ROOT"
    cp tomcat/server.xml "$run/conf/server.xml"
    cp /etc/tomcat10/web.xml "$run/conf/web.xml"
    cp www/1mb.bin www/hello.txt jsp/hello.jsp "$run/webapps/ROOT/" ;;
  jetty)
    mkdir -p "$run/webapps/ROOT"
    cp jetty/start.ini "$run/start.ini"
    cp www/1mb.bin www/hello.txt jsp/hello.jsp "$run/webapps/ROOT/" ;;
  *)
    echo "setup-server.sh: unknown server '$1': write nginx, apache, tomcat or jetty" >&2
    exit 2 ;;
esac
