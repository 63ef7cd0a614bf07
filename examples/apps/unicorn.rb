# Unicorn for the shootout examples: shootout passes the port in $PORT (on 127.0.0.1, or $LISTEN_HOST: 0.0.0.0 for
# a server on another machine); $WORKERS forked single-threaded workers (3 by default, as in the classic
# Puma/Unicorn comparisons), the application loaded once before forking.
listen "#{ENV.fetch('LISTEN_HOST', '127.0.0.1')}:#{ENV.fetch('PORT')}"
worker_processes Integer(ENV.fetch("WORKERS", "3"))
preload_app true
timeout 30
