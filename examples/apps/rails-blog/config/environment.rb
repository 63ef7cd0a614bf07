# Loads and starts the blog; the environment is production unless RAILS_ENV says otherwise.
ENV["RAILS_ENV"] ||= "production"
require_relative "application"
Rails.application.initialize!
