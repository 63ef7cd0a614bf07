# Debian's Redmine (/usr/share/redmine, instance "default"), served from this folder so that every server of
# examples/redmine.toml starts the same way (Unicorn's ../unicorn.rb, Passenger's app root); the database comes
# from DATABASE_URL, which the suite points at its own PostgreSQL.
redmine = "/usr/share/redmine"
Dir.chdir(redmine)
instance_eval(File.read(File.join(redmine, "config.ru")), File.join(redmine, "config.ru"))
