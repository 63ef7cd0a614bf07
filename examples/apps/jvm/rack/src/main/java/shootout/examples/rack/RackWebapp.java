// What the jruby-rack launchers (Tomcat, Jetty, Undertow) share: their command line, the settings that make
// jruby-rack boot a Rack app from a plain folder, and the versions they print.
package shootout.examples.rack;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/** One Rack app to serve: `LAUNCHER PORT APP_DIR [THREADS]`, where APP_DIR holds config.ru. */
public final class RackWebapp {
    /** Debian's pure-Ruby gems (rack, rails), which Debian's JRuby does not see by itself. */
    private static final String DEBIAN_GEMS = "/usr/lib/ruby/vendor_ruby";

    public final int port;
    public final Path appDir;
    /** The container's request threads; 16 by default, like `puma -t 16` in the suites. */
    public final int threads;

    private RackWebapp(int port, Path appDir, int threads) {
        this.port = port;
        this.appDir = appDir;
        this.threads = threads;
    }

    /**
     * Reads the command line. `--version` prints the container's version (given), jruby-rack's and JRuby's, which
     * loads each of them, and exits; a bad command line exits 2 with the usage.
     */
    public static RackWebapp fromArgs(String launcher, String container, String[] args) {
        if (args.length == 1 && args[0].equals("--version")) {
            System.out.println(container + ", jruby-rack " + jrubyRackVersion() + ", JRuby " + jrubyVersion());
            System.exit(0);
        }
        try {
            if (args.length < 2 || args.length > 3) {
                throw new IllegalArgumentException("expected 2 or 3 arguments, got " + args.length);
            }
            int port = Integer.parseInt(args[0]);
            Path dir = Path.of(args[1]).toAbsolutePath().normalize();
            if (!Files.isRegularFile(dir.resolve("config.ru"))) {
                throw new IllegalArgumentException(dir + " has no config.ru");
            }
            int threads = args.length == 3 ? Integer.parseInt(args[2]) : 16;
            return new RackWebapp(port, dir, threads);
        } catch (IllegalArgumentException e) {
            System.err.println(launcher + ": " + e.getMessage());
            System.err.println("usage: " + launcher + " PORT APP_DIR [THREADS]   (APP_DIR holds config.ru)");
            System.err.println("       " + launcher + " --version");
            System.exit(2);
            throw e;
        }
    }

    /**
     * The servlet context's init parameters for jruby-rack: the app is a plain folder (not a WAR's WEB-INF), its
     * config.ru is the rackup, and one JRuby runtime serves every request thread (jruby-rack's shared factory,
     * chosen when no runtime pool is asked for), with Debian's gems on its load path.
     */
    public Map<String, String> initParams() {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("jruby.rack.layout_class", "JRuby::Rack::FileSystemLayout");
        params.put("app.root", appDir.toString());
        params.put("rackup.path", "/config.ru");
        params.put("jruby.runtime.arguments", "-I" + DEBIAN_GEMS);
        params.put("rack.env", "production");
        params.put("jruby.rack.logging", "stdout");
        return params;
    }

    private static String jrubyRackVersion() {
        try (InputStream in = RackWebapp.class.getResourceAsStream(
                "/META-INF/maven/org.jruby.rack/jruby-rack/pom.properties")) {
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException | NullPointerException e) {
            return "(unknown version)";
        }
    }

    private static String jrubyVersion() {
        try {
            return (String) Class.forName("org.jruby.runtime.Constants").getField("VERSION").get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("JRuby is not on the class path (install Debian's jruby)", e);
        }
    }
}
