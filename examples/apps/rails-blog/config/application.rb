# A small Rails 6.1 application in production mode: a blog whose index renders the ten newest articles from
# SQLite (or PostgreSQL, given DATABASE_URL) through a layout, as in the classic "Unicorn or Puma for my Rails
# app?" comparisons. It loads Debian's gems with plain `require` (no Bundler, no Gemfile: nothing is fetched).
require "rails"
require "active_record/railtie"
require "action_controller/railtie"
require "action_view/railtie"

module Blog
  class Application < Rails::Application
    config.load_defaults 6.1
    config.root = File.expand_path("..", __dir__)
    config.eager_load = true
    config.cache_classes = true
    config.consider_all_requests_local = false
    config.action_controller.perform_caching = true
    config.public_file_server.enabled = false
    # A benchmark key: the app keeps no secrets, but Rails refuses to serve without one in production.
    config.secret_key_base = ENV.fetch("SECRET_KEY_BASE") { "shootout-example-" * 4 }
    # Warnings only, to the server's own log (shootout keeps it under logs/): a log line per request would
    # make the disk part of the measurement.
    config.logger = ActiveSupport::Logger.new($stdout)
    config.log_level = :warn
    config.hosts.clear
  end
end
