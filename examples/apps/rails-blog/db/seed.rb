# Makes the blog's database: the articles table and 20 articles (the index shows the newest 10). With SQLite (the
# default) it builds a new file and renames it into place, so a server already reading the old one is never
# disturbed; with DATABASE_URL (rails-blog-postgres.toml's PostgreSQL, before each server starts) it replaces the
# table in that database.
#
#     ruby db/seed.rb          (shootout's suites run it as each server's setup)
require_relative "../config/application"
postgres = ENV.key?("DATABASE_URL")
unless postgres
  target = File.expand_path("blog.sqlite3", __dir__)
  building = "#{target}.#{Process.pid}"
  ENV["BLOG_DATABASE"] = building
end
Rails.application.initialize!

ActiveRecord::Schema.define do
  create_table :articles, force: true do |t|
    t.string :title, null: false
    t.text :body, null: false
    t.timestamps
  end
end
words = %w[server latency worker thread request socket queue throughput process memory]
start = Time.utc(2026, 1, 1)
(1..20).each do |n|
  paragraphs = Array.new(3) { |p| Array.new(40) { |w| words[(n * 7 + p * 3 + w) % words.size] }.join(" ").capitalize + "." }
  Article.create!(title: "Article #{n}", body: paragraphs.join("\n\n"), created_at: start + n * 86_400, updated_at: start)
end
ActiveRecord::Base.connection.disconnect!
if postgres
  puts "seed: the PostgreSQL database #{ActiveRecord::Base.connection_db_config.database} holds 20 articles"
else
  File.rename(building, target)
  puts "seed: #{target} holds 20 articles"
end
