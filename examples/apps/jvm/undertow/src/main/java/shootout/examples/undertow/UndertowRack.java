// A Rack app on JRuby inside Undertow, through jruby-rack's servlet: the web core of TorqueBox 4, which served
// Rack apps from Undertow (TorqueBox 4 had its own Rack bridge; jruby-rack's servlet stands in for it here).
// Undertow 2.2, the newest javax.servlet line, so that jruby-rack 1.2 runs on it as on Tomcat 9 and Jetty 9.4.
package shootout.examples.undertow;

import io.undertow.Undertow;
import io.undertow.Version;
import io.undertow.server.handlers.resource.FileResourceManager;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import org.jruby.rack.RackServlet;
import org.jruby.rack.RackServletContextListener;
import shootout.examples.rack.RackWebapp;

public final class UndertowRack {
    public static void main(String[] args) throws Exception {
        RackWebapp app = RackWebapp.fromArgs("jruby-rack-undertow", "Undertow " + Version.getVersionString(), args);

        // The app's folder is the deployment's resources: jruby-rack reads /config.ru from it.
        DeploymentInfo deployment = Servlets.deployment()
                .setClassLoader(UndertowRack.class.getClassLoader())
                .setContextPath("/")
                .setDeploymentName("rack")
                .setResourceManager(new FileResourceManager(app.appDir.toFile()))
                .addListener(Servlets.listener(RackServletContextListener.class))
                .addServlet(Servlets.servlet("rack", RackServlet.class).addMapping("/*"));
        app.initParams().forEach(deployment::addInitParameter);
        DeploymentManager manager = Servlets.defaultContainer().addDeployment(deployment);
        manager.deploy();

        // Undertow's I/O threads (one per core, its default) hand requests to the worker pool, where the app runs.
        Undertow server = Undertow.builder()
                .addHttpListener(app.port, "127.0.0.1")
                .setWorkerThreads(app.threads)
                .setHandler(manager.start())
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> { // SIGTERM stops the listener, then the app
            server.stop();
            try {
                manager.stop();
            } catch (Exception e) {
                System.err.println("jruby-rack-undertow: stopping: " + e);
            }
            manager.undeploy();
        }));
        server.start();
    }
}
