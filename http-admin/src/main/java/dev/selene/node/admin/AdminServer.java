package dev.selene.node.admin;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import dev.selene.actors.api.SettingsException;
import dev.selene.node.config.AdminSettings;
import dev.selene.node.config.NodeSettings;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;

import java.net.BindException;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The admin HTTP server of one node, a cache node or a pool manager: Pekko HTTP on the node's own actor system,
 * bound to one address, with connection limits of its own ({@value #LIMITS_RESOURCE}) and a header-read deadline.
 */
public final class AdminServer implements AutoCloseable {

    /**
     * The admin server's address {@code bind} as a URL's host: an IPv6 literal in brackets ({@code [::1]}), any other
     * address or name as it is.
     */
    public static String urlHost(String bind) {
        return bind.indexOf(':') >= 0 && !bind.startsWith("[") ? "[" + bind + "]" : bind;
    }

    /** The class-path resource of the admin server's connection limits. */
    static final String LIMITS_RESOURCE = "selene-admin-server.conf";
    /** Their section, in that resource and (to override them) in the actor system's configuration. */
    static final String LIMITS_PATH = "selene-admin-server";

    private final ServerBinding binding;

    private AdminServer(ServerBinding binding) {
        this.binding = binding;
    }

    /**
     * Binds the admin routes of a cache node; a port in use or an address that cannot be bound is a
     * {@link SettingsException} naming the setting.
     */
    public static AdminServer start(AdminContext ctx) {
        AdminSettings a = ctx.settings().admin();
        return bind(ctx.cache().system(), a.bind(), a.port(), "selene.admin.bind/port",
                new AdminRoutes(ctx).routes());
    }

    /**
     * Binds the admin routes of a pool manager on {@code selene.admin.bind} and {@code selene.manager.admin-port};
     * a port in use or an address that cannot be bound is a {@link SettingsException} naming the settings.
     */
    public static AdminServer start(ManagerContext ctx) {
        NodeSettings s = ctx.settings();
        return bind(ctx.node().system(), s.admin().bind(), s.manager().adminPort(),
                "selene.admin.bind/selene.manager.admin-port", new ManagerRoutes(ctx).routes());
    }

    private static AdminServer bind(ActorSystem<?> system, String address, int port, String settings, Route route) {
        Config systemConfig = Adapter.toClassic(system).settings().config();
        ServerSettings server;
        Flow<HttpRequest, HttpResponse, ?> handler;
        try {
            Config limits = limits(systemConfig);
            server = ServerSettings.create(limits.getConfig("pekko-http-server").atPath("pekko.http.server")
                            .withFallback(systemConfig))
                    .withParsingErrorHandler(JsonParsingErrorHandler.class.getName());
            // Pekko's parser reads the methods HTTP defines as such, and any other up to a space or this many
            // bytes. The admin routes take no other, so at 1 a request line that does not start with one (a bare
            // line break, "GARBAGE") is a 400 at its first bytes, not a wait for a space that may never come.
            server = server.withParserSettings(server.getParserSettings().withMaxMethodLength(1));
            handler = BidiFlow.fromGraph(new HeaderReadDeadline(limits.getDuration("header-read-timeout")))
                    .join(route.flow(system));
        } catch (ConfigException | IllegalArgumentException e) {
            throw new SettingsException(LIMITS_PATH + " is invalid: " + e.getMessage() + "; see " + LIMITS_RESOURCE
                    + " for the settings and their defaults");
        }
        try {
            ServerBinding b = Http.get(system).newServerAt(address, port).withSettings(server)
                    .bindFlow(handler).toCompletableFuture().get(15, TimeUnit.SECONDS);
            return new AdminServer(b);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            String why = c instanceof BindException || (c != null && c.getCause() instanceof BindException)
                    ? "it cannot be bound (" + (c.getMessage() == null ? "in use" : firstLine(c.getMessage())) + ")"
                    : String.valueOf(c);
            throw new SettingsException(settings + " = '" + address + ":" + port + "' is invalid: " + why
                    + "; allowed: a free port on a local address, or port 0 for any free port");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while binding the admin server", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("the admin server did not bind within 15 s", e);
        }
    }

    /**
     * The admin server's connection limits: those of {@link #LIMITS_RESOURCE}, under any that {@code systemConfig}
     * (an application.conf, system properties) sets at {@link #LIMITS_PATH}.
     */
    static Config limits(Config systemConfig) {
        Config shipped = ConfigFactory.parseResources(AdminServer.class, "/" + LIMITS_RESOURCE,
                ConfigParseOptions.defaults().setAllowMissing(false)).getConfig(LIMITS_PATH);
        return systemConfig.hasPath(LIMITS_PATH) ? systemConfig.getConfig(LIMITS_PATH).withFallback(shipped) : shipped;
    }

    /** The port bound (the one picked when the setting was 0). */
    public int port() {
        return binding.localAddress().getPort();
    }

    /** The address bound, as host:port. */
    public String address() {
        return binding.localAddress().getHostString() + ":" + port();
    }

    /**
     * Stops accepting connections and lets requests in progress finish for up to a second; completes when every
     * connection is closed. Does not block: coordinated shutdown runs it on the node's dispatcher.
     */
    public CompletionStage<Done> stop() {
        return binding.terminate(Duration.ofSeconds(1)).handle((t, e) -> Done.getInstance());
    }

    /** {@link #stop()} and wait for it. */
    @Override
    public void close() {
        try {
            binding.terminate(Duration.ofSeconds(1)).toCompletableFuture().get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the actor system's shutdown closes what is left
        }
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
