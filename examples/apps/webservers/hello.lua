-- Apache's dynamic "Hello" for the web-server shootout: a Lua handler run in the server's threads (mod_lua).
function handle(r)
    r.content_type = "text/plain"
    r:puts("Hello World\n")
    return apache2.OK
end
