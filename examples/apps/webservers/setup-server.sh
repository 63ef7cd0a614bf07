#!/bin/sh
# Prepares a private run directory, /tmp/shootout-SERVER-PORT, for one server of the web-server shootouts: the
# 1 MiB file (made once, here), and per server its configuration with the port and paths filled in. The -h2
# variants also speak HTTP/2 in the clear (h2c with prior knowledge) on the same port: nginx then speaks only
# HTTP/2 there; Tomcat and Jetty speak both (Apache's HTTP/2 comes from -DHTTP2 on its command line instead).
# Apache and Netty (../jvm/netty-server) take all they need on their command line: they get only the file.
# Usage: setup-server.sh nginx|nginx-h2|apache|netty|tomcat|tomcat-h2|jetty|jetty-h2 PORT
set -eu
cd "$(dirname "$0")"
[ -f www/1mb.bin ] || head -c 1048576 /dev/urandom > www/1mb.bin
run="/tmp/shootout-$1-$2"
mkdir -p "$run"
case "$1" in
  nginx|nginx-h2)
    listen="$2" sendfile=on
    # nginx-h2, sendfile off: with it on, nginx 1.22 answered every small file over h2c about 44 ms late (22
    # requests/s at 1 user, measured alike by shootout and h2load); off, it answered 10,800/s.
    [ "$1" = nginx ] || { listen="$2 http2"; sendfile=off; }
    sed -e "s|@PORT@|$listen|" -e "s|@RUN@|$run|" -e "s|@ROOT@|$PWD/www|" -e "s|sendfile on;|sendfile $sendfile;|" \
      nginx.conf.in > "$run/nginx.conf" ;;
  apache|netty) ;;
  tomcat|tomcat-h2)
    # A CATALINA_BASE of our own; Debian's global web.xml declares the default (static) and JSP servlets.
    mkdir -p "$run/conf" "$run/logs" "$run/temp" "$run/work" "$run/webapps/ROOT"
    if [ "$1" = tomcat ]; then
      cp tomcat/server.xml "$run/conf/server.xml"
    else
      sed 's|<!-- @HTTP2@ -->|<UpgradeProtocol className="org.apache.coyote.http2.Http2Protocol"/>|' \
        tomcat/server.xml > "$run/conf/server.xml"
    fi
    cp /etc/tomcat10/web.xml "$run/conf/web.xml"
    cp www/1mb.bin www/hello.txt jsp/hello.jsp "$run/webapps/ROOT/" ;;
  jetty|jetty-h2)
    mkdir -p "$run/webapps/ROOT"
    cp jetty/start.ini "$run/start.ini"
    [ "$1" = jetty ] || echo "--module=http2c" >> "$run/start.ini"
    cp www/1mb.bin www/hello.txt jsp/hello.jsp "$run/webapps/ROOT/" ;;
  *)
    echo "setup-server.sh: unknown server '$1': write nginx, apache, netty, tomcat or jetty (or nginx, tomcat or jetty with -h2)" >&2
    exit 2 ;;
esac
