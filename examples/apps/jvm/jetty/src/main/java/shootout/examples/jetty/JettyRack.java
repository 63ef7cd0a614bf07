// A Rack app on JRuby inside embedded Jetty, through jruby-rack's servlet: what Mizuno wrapped (Mizuno was
// `mizuno config.ru`, an embedded Jetty driving a Rack app from the command line, like this launcher). Embedded
// rather than Debian's jetty9, so that the three jruby-rack containers are started, configured and stopped alike.
package shootout.examples.jetty;

import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;
import org.eclipse.jetty.util.Jetty;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jruby.rack.RackServlet;
import org.jruby.rack.RackServletContextListener;
import shootout.examples.rack.RackWebapp;

public final class JettyRack {
    public static void main(String[] args) throws Exception {
        RackWebapp app = RackWebapp.fromArgs("jruby-rack-jetty", "Jetty " + Jetty.VERSION, args);

        // Jetty's pool also runs its acceptor and selector (one each here), so those come on top of the
        // request threads.
        Server server = new Server(new QueuedThreadPool(app.threads + 2, Math.min(8, app.threads + 2)));
        ServerConnector http = new ServerConnector(server, 1, 1);
        http.setHost("127.0.0.1");
        http.setPort(app.port);
        server.addConnector(http);

        // The app's folder is the context's resource base: jruby-rack reads /config.ru from it.
        ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        context.setContextPath("/");
        context.setResourceBase(app.appDir.toString());
        app.initParams().forEach(context::setInitParameter);
        context.addEventListener(new RackServletContextListener());
        context.addServlet(new ServletHolder("rack", new RackServlet()), "/*");
        server.setHandler(context);

        server.setStopAtShutdown(true); // SIGTERM stops the connector, then the app
        server.start();
        server.join();
    }
}
