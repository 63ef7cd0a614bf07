# Unicorn for the shootout examples: shootout passes the port in $PORT; $WORKERS forked single-threaded
# workers (3 by default, as in the classic Puma/Unicorn comparisons), the application loaded once before forking.
listen "127.0.0.1:#{ENV.fetch('PORT')}"
worker_processes Integer(ENV.fetch("WORKERS", "3"))
preload_app true
timeout 30
