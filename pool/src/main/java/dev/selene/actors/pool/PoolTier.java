package dev.selene.actors.pool;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.actors.store.RemoteTier;
import dev.selene.actors.store.Store;
import dev.selene.engine.config.CacheConfig;
import org.apache.pekko.actor.typed.Behavior;

/**
 * The shared pool as a node's remote tier: a pool host joins the pool's cluster, and its pool store retires records
 * to the managers and fetches them back. Found by the node through {@link java.util.ServiceLoader} when this module
 * is on the class path.
 */
public final class PoolTier implements RemoteTier {

    /** For {@link java.util.ServiceLoader}. */
    public PoolTier() {
    }

    @Override
    public SystemSetup system(Config settings, String name, CacheConfig config) {
        PoolCluster.failoverAfter(settings.withFallback(ConfigFactory.defaultReference())); // one line if invalid
        if ("cluster".equals(settings.getString("pekko.actor.provider"))) {
            return new SystemSetup(settings, name); // the application's settings make it a cluster node already
        }
        // A pool host is a member of the pool's cluster: the system joins the managers under the pool's name.
        return new SystemSetup(PoolCluster.config(settings.getString("selene.pool.bind"),
                settings.getInt("selene.pool.port"), config.poolManagers(), PoolCluster.HOST_ROLE, settings),
                PoolCluster.SYSTEM_NAME);
    }

    @Override
    public Behavior<Store.Command> store(Context context) {
        return PoolStore.create(context.layout(), context.host(), PoolStore.DIRECTORY_SHARDS, context.metrics(),
                context.traces(), context.onReachable(), context.onMisfit(), context.joinTimeout());
    }

    @Override
    public String unreachableHint(Config settings) {
        // The cluster drops a connection addressed to a name its node does not bind by (localhost for a manager bound
        // to 127.0.0.1), and a plain-text connection to a TLS node, saying so only in that node's log.
        String spelling = ", that each address is spelled as that manager binds it (selene.manager.bind: "
                + "localhost and 127.0.0.1 are two names to the cluster)";
        return PoolSecurity.from(settings).tls()
                ? spelling + ", and that this host's certificate (selene.pool.tls) is signed by the pool's CA and "
                + "valid (a manager that refused it logged why)"
                : spelling + ", and that the managers run without TLS, as this host does (selene.pool.tls)";
    }
}
