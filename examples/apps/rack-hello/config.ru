# The smallest Rack application: every request gets the same 12-byte text answer, so a shootout measures the
# server (its parser, its worker model, its scheduling), not the application.
ANSWER = ["Hello World\n"].freeze
HEADERS = { "content-type" => "text/plain" }.freeze

run ->(_env) { [200, HEADERS.dup, ANSWER] }
