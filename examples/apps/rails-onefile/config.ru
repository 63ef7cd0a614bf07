# Rails in one file: a controller that renders an ERB template, with no database, the smallest Rails app that
# still runs the whole Rails stack (middleware, routing, controller, view) for every request. Debian's gems are
# loaded with plain `require`: no Gemfile, nothing fetched.
require "rails"
require "action_controller/railtie"
require "action_view/railtie"

class OneFile < Rails::Application
  config.root = __dir__
  config.eager_load = true
  config.cache_classes = true
  config.consider_all_requests_local = false
  config.action_controller.perform_caching = true
  config.secret_key_base = ENV.fetch("SECRET_KEY_BASE") { "shootout-example-" * 4 }
  config.logger = ActiveSupport::Logger.new($stdout)
  config.log_level = :warn
  config.hosts.clear
end

class GreetingsController < ActionController::Base
  TEMPLATE = <<~ERB # not frozen: ActionView compiles an inline template in place
    <h1>Hello <%= @name %></h1>
    <ul><% @servers.each do |server| %><li><%= server %></li><% end %></ul>
  ERB

  def show
    @name = params.fetch(:name, "World")
    @servers = %w[Puma Thin Unicorn]
    render inline: TEMPLATE, layout: false
  end
end

OneFile.initialize!
OneFile.routes.draw do
  root "greetings#show"
end
run OneFile
