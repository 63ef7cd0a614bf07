// A small HTTP/1.1 server on Netty 4, what Socko wrapped (Socko was a Scala/Akka web server on Netty serving
// static files and dynamic handlers): `netty-server PORT WWW_DIR` answers `/` and `/hello` with the 12-byte
// "Hello World\n" of the other dynamic hellos, and serves any other path from WWW_DIR (with sendfile, through
// Netty's FileRegion), 404 for what is not there. Keep-alive and Content-Length on every answer; pipelined
// requests are answered in order. Netty's portable NIO transport, as Socko used.
package shootout.examples.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.CharsetUtil;
import io.netty.util.Version;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

public final class NettyServer {
    private static final ByteBuf HELLO =
            Unpooled.unreleasableBuffer(Unpooled.copiedBuffer("Hello World\n", CharsetUtil.US_ASCII));

    public static void main(String[] args) throws InterruptedException {
        if (args.length == 1 && args[0].equals("--version")) {
            System.out.println("Netty " + Version.identify().get("netty-codec-http").artifactVersion());
            return;
        }
        if (args.length != 2 || !Files.isDirectory(Path.of(args[1]))) {
            System.err.println("usage: netty-server PORT WWW_DIR   (serves / and /hello, and files from WWW_DIR)");
            System.err.println("       netty-server --version");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        Path root = Path.of(args[1]).toAbsolutePath().normalize();

        // One thread accepts; the workers (twice the cores, Netty's default) each own their connections.
        EventLoopGroup boss = new NioEventLoopGroup(1);
        EventLoopGroup workers = new NioEventLoopGroup();
        // SIGTERM: stop accepting, let queued writes finish (at most 5 s), close, exit.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            boss.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS).syncUninterruptibly();
            workers.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS).syncUninterruptibly();
        }));
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new Handler(root));
                    }
                });
        ChannelFuture bound = bootstrap.bind("127.0.0.1", port).sync();
        System.out.println("netty-server: listening on 127.0.0.1:" + port + ", files from " + root);
        bound.channel().closeFuture().sync();
    }

    /** How one request is answered: on its connection, its HTTP version, and whether the connection stays. */
    private record Answer(ChannelHandlerContext ctx, boolean keepAlive, HttpVersion version) {
        /** A short text answer for a status: its reason phrase and a newline. */
        void text(HttpResponseStatus status, boolean head) {
            ByteBuf body = Unpooled.copiedBuffer(status.reasonPhrase() + "\n", CharsetUtil.US_ASCII);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    head ? Unpooled.EMPTY_BUFFER : body);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
            HttpUtil.setContentLength(response, body.readableBytes());
            if (head) {
                body.release();
            }
            send(response);
        }

        void send(FullHttpResponse response) {
            keepAliveHeader(response);
            closeUnlessKept(ctx.writeAndFlush(response));
        }

        /** An HTTP/1.0 client that asked for keep-alive is told it has it; any client is told of a close. */
        void keepAliveHeader(HttpResponse response) {
            if (!keepAlive) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            } else if (version.equals(HttpVersion.HTTP_1_0)) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
        }

        void closeUnlessKept(ChannelFuture written) {
            if (!keepAlive) {
                written.addListener(ChannelFutureListener.CLOSE);
            }
        }
    }

    /** Answers each request when its head arrives; request bodies are read and dropped by the codec. */
    private static final class Handler extends SimpleChannelInboundHandler<HttpObject> {
        private final Path root;

        Handler(Path root) {
            this.root = root;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) throws IOException {
            if (!(msg instanceof HttpRequest)) {
                return;
            }
            HttpRequest request = (HttpRequest) msg;
            if (request.decoderResult().isFailure()) { // not HTTP: say so and close
                new Answer(ctx, false, HttpVersion.HTTP_1_1).text(HttpResponseStatus.BAD_REQUEST, false);
                return;
            }
            // HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 only when it asks for keep-alive.
            Answer answer = new Answer(ctx, HttpUtil.isKeepAlive(request), request.protocolVersion());
            boolean head = request.method().equals(HttpMethod.HEAD);
            if (!head && !request.method().equals(HttpMethod.GET)) {
                answer.text(HttpResponseStatus.METHOD_NOT_ALLOWED, false);
                return;
            }
            String path = new QueryStringDecoder(request.uri()).path();
            if (path.equals("/") || path.equals("/hello")) {
                FullHttpResponse response = new DefaultFullHttpResponse(
                        HttpVersion.HTTP_1_1, HttpResponseStatus.OK, head ? Unpooled.EMPTY_BUFFER : HELLO.duplicate());
                response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
                HttpUtil.setContentLength(response, HELLO.readableBytes());
                answer.send(response);
                return;
            }
            Path file;
            try {
                file = root.resolve(path.substring(1)).normalize();
            } catch (InvalidPathException e) {
                file = root;
            }
            if (!file.startsWith(root) || !Files.isRegularFile(file) || !Files.isReadable(file)) {
                answer.text(HttpResponseStatus.NOT_FOUND, head);
                return;
            }
            RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r");
            long length = raf.length();
            HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType(file));
            HttpUtil.setContentLength(response, length);
            answer.keepAliveHeader(response);
            ctx.write(response);
            if (head) {
                raf.close();
            } else {
                ctx.write(new DefaultFileRegion(raf.getChannel(), 0, length)); // closes the file when sent
            }
            answer.closeUnlessKept(ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT));
        }

        private static String contentType(Path file) {
            String name = file.getFileName().toString();
            if (name.endsWith(".txt")) {
                return "text/plain";
            } else if (name.endsWith(".html")) {
                return "text/html";
            }
            return "application/octet-stream";
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a client that hung up mid-answer, or a broken request: drop the connection
        }
    }
}
