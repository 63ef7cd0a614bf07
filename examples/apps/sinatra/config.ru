# A Sinatra app for the MRI-against-JRuby shootout: a plain-text "Hello World" at / and an ERB page at /erb, so
# the comparison runs real framework code (routing, filters, templates), not only the server.
require "sinatra/base"

class Greeter < Sinatra::Base
  set :logging, false
  set :environment, :production

  get "/" do
    content_type "text/plain"
    "Hello World\n"
  end

  get "/erb" do
    @servers = ["Puma on MRI", "Puma on JRuby"]
    erb "<h1>Hello World</h1>\n<ul><% @servers.each do |s| %><li><%= s %></li><% end %></ul>\n"
  end
end

run Greeter
