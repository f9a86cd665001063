package dev.selene.actors.pool;

import dev.selene.actors.api.CacheSettings;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingQuery;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A pool manager in a JVM of its own, for the kill tests: it prints {@code ready address=host:port} once it is an
 * up member of the cluster, then answers on stdin until stdin closes:
 * <ul>
 *   <li>{@code status <n>}: {@code records=} {@code uploading=} {@code serving=} {@code refused=} of its store;</li>
 *   <li>{@code list <n>}: {@code records=namespace:hash:parent,...} its store holds ({@code parent} {@code -} for
 *   a root);</li>
 *   <li>{@code entities <n>}: {@code entities=shard-i,...}, the directory entities running on it;</li>
 *   <li>{@code invariants <n>}: {@code violation=} the first broken invariant of its store (words joined by
 *   {@code _}), empty when every one holds; {@code stopped=true} when the node has shut itself down (the cluster
 *   downed it), so its store is gone.</li>
 * </ul>
 * Arguments: port, every manager's {@code host:port} (comma-separated, the same order on every manager, so the
 * first seed restarted joins the others), replicas, store slots.
 */
final class ManagerProcess {

    private static final Duration UP_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(10);

    private ManagerProcess() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        List<String> seeds = List.of(args[1].split(","));
        int replicas = Integer.parseInt(args[2]);
        long storeSlots = Long.parseLong(args[3]);
        ManagerConfig config = new ManagerConfig(KeyedChains.LAYOUT, storeSlots * KeyedChains.LAYOUT.slotBytes(), null,
                replicas, ManagerConfig.DEFAULT_DIRECTORY_SHARDS);
        PoolManagerNode node = PoolManagerNode.start(config, PoolCluster.config("127.0.0.1", port, seeds,
                PoolCluster.MANAGER_ROLE, CacheSettings.standaloneSystemConfig()));
        long deadline = System.nanoTime() + UP_TIMEOUT.toNanos();
        while (!node.isUp()) {
            if (System.nanoTime() - deadline > 0) {
                ChildJvm.say("failed reason=not-up-within-" + UP_TIMEOUT.toSeconds() + "s");
                Runtime.getRuntime().halt(1);
            }
            Thread.sleep(20);
        }
        ChildJvm.say("ready address=" + node.address());
        ChildJvm.serve(Map.of(
                "status", a -> status(node),
                "list", a -> list(node),
                "invariants", a -> invariants(node),
                "entities", a -> entities(node)));
    }

    private static String status(PoolManagerNode node) throws Exception {
        ManagerStore.StoreStatus s = node.status().toCompletableFuture().get(ASK_TIMEOUT.toSeconds(),
                TimeUnit.SECONDS);
        return "records=" + s.records() + " uploading=" + s.uploading() + " serving=" + s.serving() + " refused="
                + s.refused() + " uploads=" + s.uploads() + " evicted=" + s.evicted();
    }

    private static String invariants(PoolManagerNode node) throws Exception {
        try {
            return "violation=" + node.checkInvariants().toCompletableFuture()
                    .get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS).replace(' ', '_');
        } catch (java.util.concurrent.ExecutionException e) {
            // A node the cluster downed shuts itself down: its store stopped with it.
            node.system().getWhenTerminated().toCompletableFuture().get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            return "stopped=true";
        }
    }

    /** Every record this node's store holds, asked of the store shard by shard as a directory entity asks. */
    private static String list(PoolManagerNode node) throws Exception {
        ActorSystem<?> system = node.system();
        ActorRef<ManagerStore.Command> store = localStore(system);
        int shards = ManagerConfig.DEFAULT_DIRECTORY_SHARDS;
        List<CompletableFuture<ManagerStore.HoldingsReply>> replies = new ArrayList<>();
        for (int shard = 0; shard < shards; shard++) {
            int s = shard;
            replies.add(AskPattern.<ManagerStore.Command, ManagerStore.HoldingsReply>ask(store,
                    r -> new ManagerStore.Holdings(s, shards, r), ASK_TIMEOUT, system.scheduler())
                    .toCompletableFuture());
        }
        List<String> records = new ArrayList<>();
        for (CompletableFuture<ManagerStore.HoldingsReply> r : replies) {
            for (PoolEntry e : r.get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS).entries()) {
                records.add(e.key().namespace() + ":" + e.key().hash() + ":"
                        + (e.parent() == null ? "-" : String.valueOf(e.parent().hash())));
            }
        }
        return "records=" + String.join(",", records);
    }

    /** The directory entities running on this node now. */
    private static String entities(PoolManagerNode node) throws Exception {
        ActorSystem<?> system = node.system();
        ShardRegion.CurrentShardRegionState state = AskPattern.<ClusterShardingQuery,
                ShardRegion.CurrentShardRegionState>ask(ClusterSharding.get(system).shardState(),
                r -> new GetShardRegionState(PoolDirectory.TYPE, r), ASK_TIMEOUT, system.scheduler())
                .toCompletableFuture().get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        List<String> ids = new ArrayList<>();
        state.getShards().forEach(s -> ids.addAll(s.getEntityIds()));
        return "entities=" + String.join(",", ids);
    }

    private static ActorRef<ManagerStore.Command> localStore(ActorSystem<?> system) throws Exception {
        Receptionist.Listing listing = AskPattern.<Receptionist.Command, Receptionist.Listing>ask(
                system.receptionist(), r -> Receptionist.find(ManagerStore.KEY, r), ASK_TIMEOUT,
                system.scheduler()).toCompletableFuture().get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        return listing.getServiceInstances(ManagerStore.KEY).stream()
                .filter(s -> s.path().address().hasLocalScope())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("this node's store is not registered"));
    }
}
