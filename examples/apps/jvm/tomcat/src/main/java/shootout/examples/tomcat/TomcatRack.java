// A Rack app on JRuby inside embedded Tomcat, through jruby-rack's servlet: what Trinidad packaged (Trinidad was
// an embedded Tomcat 7 with jruby-rack, started from the command line like this).
//
// Why an embedded Tomcat 9 and not Debian's tomcat10: Tomcat 10 is Jakarta EE (jakarta.servlet). The one
// jakarta.servlet jruby-rack, 2.0.0, is compiled for Java 21 (class file 65), and Debian 12 has Java 17 only.
// jruby-rack 1.2.x runs on Java 17 but is javax.servlet, and Tomcat's jakartaee-migration tool cannot convert
// it: it rewrites the class files, while jruby-rack's Ruby half names the javax classes itself
// (`Java::JavaxServlet::ServletContext` in jruby/rack/servlet_ext.rb, loaded at boot). Tried: 1.2.6 converted by
// jakartaee-migration 1.0.12 in Debian's Tomcat 10.1 answers every request with a 500, "RackInitializationException:
// Java class javax.servlet.ServletContext not found". Tomcat 9 (Servlet 4.0, javax.servlet) runs jruby-rack 1.2
// as it is.
package shootout.examples.tomcat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.catalina.util.ServerInfo;
import org.jruby.rack.RackServlet;
import org.jruby.rack.RackServletContextListener;
import shootout.examples.rack.RackWebapp;

public final class TomcatRack {
    public static void main(String[] args) throws Exception {
        RackWebapp app = RackWebapp.fromArgs("jruby-rack-tomcat", ServerInfo.getServerInfo(), args);
        // Tomcat's work folder (it compiles nothing here, but wants one), removed when it stops.
        Path base = Files.createTempDirectory("shootout-tomcat-rack-" + app.port + "-");

        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        Connector http = new Connector("HTTP/1.1");
        http.setPort(app.port);
        http.setProperty("address", "127.0.0.1");
        http.setProperty("maxThreads", Integer.toString(app.threads));
        http.setProperty("maxKeepAliveRequests", "-1");
        tomcat.setConnector(http);

        // The app's folder is the context's document base: jruby-rack reads /config.ru from it.
        Context context = tomcat.addContext("", app.appDir.toString());
        app.initParams().forEach(context::addParameter);
        context.addApplicationListener(RackServletContextListener.class.getName());
        Tomcat.addServlet(context, "rack", new RackServlet());
        context.addServletMappingDecoded("/*", "rack");

        // Embedded Tomcat has no shutdown hook of its own: SIGTERM stops it here.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (Exception e) {
                System.err.println("jruby-rack-tomcat: stopping: " + e);
            }
            removeTree(base);
        }));
        tomcat.start();
        tomcat.getServer().await();
    }

    private static void removeTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // Only a temporary folder left behind.
        }
    }
}
