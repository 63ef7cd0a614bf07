# The Rails blog of the example suites, for any Rack server: `puma config.ru`, `unicorn config.ru`, `thin -R config.ru`.
require_relative "config/environment"
run Rails.application
