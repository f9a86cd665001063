package dev.selene.actors.store;

import com.typesafe.config.Config;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.typed.Behavior;

import java.util.Optional;
import java.util.ServiceLoader;
import java.util.function.Consumer;

/**
 * A durable tier beyond the node's own machine (the shared pool is one), as the node sees it: a store that answers
 * the {@link Store} protocol, {@link Store.Find} and {@link Store.WatchCapacity} included. The node itself knows
 * nothing of how the tier reaches its machines; the implementation comes from another module (selene-pool) and is
 * wired in by whoever builds the node: given in the node's parts, or found with {@link ServiceLoader} when its
 * module is on the class path ({@link #installed()}). A node whose settings name pool managers and that finds
 * none refuses to start with one line saying so.
 */
public interface RemoteTier {

    /**
     * The settings and name of an actor system Selene makes itself for a node with this tier, from the application's
     * {@code settings} and the {@code name} it asked for (the pool's hosts join the pool's cluster under the pool's
     * name). Throws {@link IllegalArgumentException} with one line when the tier's settings are invalid.
     */
    SystemSetup system(Config settings, String name, CacheConfig config);

    /** The store of a node: spawned by the node (supervised, restarted with back-off) once its slots are mapped. */
    Behavior<Store.Command> store(Context context);

    /**
     * What to check, beyond the managers' addresses, when no machine of the tier was reachable at start (a clause
     * that begins with ", and", or an empty string), for the node's actor system settings {@code settings}.
     */
    String unreachableHint(Config settings);

    /** An actor system's settings and name. */
    record SystemSetup(Config settings, String name) {
    }

    /**
     * What the store gets from its node: the record layout, the host slots it reads from and writes into, the node's
     * metrics and traces; {@code onReachable} runs once, when the tier is ready to take records, which the node waits
     * {@code joinTimeout} for before it refuses to start; {@code onMisfit} runs, with one line, when the tier cannot
     * serve this node (another layout): the node then refuses to start.
     */
    record Context(Layout layout, HostMemory host, CacheMetrics metrics, TraceBook traces, Runnable onReachable,
                   Consumer<String> onMisfit, java.time.Duration joinTimeout) {
    }

    /** The remote tier a module on the class path provides, if any. */
    static Optional<RemoteTier> installed() {
        return ServiceLoader.load(RemoteTier.class, RemoteTier.class.getClassLoader()).findFirst();
    }
}
