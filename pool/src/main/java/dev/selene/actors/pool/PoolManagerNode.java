package dev.selene.actors.pool;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingQuery;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.typed.Cluster;
import org.slf4j.Logger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A pool manager node: an actor system that joins the cluster with the manager role, runs this node's
 * {@link ManagerStore} and hosts its share of the {@link PoolDirectory} entities. Stop it with {@link #close()}.
 */
public final class PoolManagerNode implements AutoCloseable {

    /** The guardian's protocol. */
    sealed interface Command {
    }

    private record GetStore(ActorRef<ActorRef<ManagerStore.Command>> replyTo) implements Command {
    }

    private record StoresListed(Set<ActorRef<ManagerStore.Command>> stores) implements Command {
    }

    /** Another manager's store said what it holds and keeps (null: it did not answer in time). */
    private record PeerAnswered(ActorRef<ManagerStore.Command> store, ManagerStore.StoreStatus status)
            implements Command {
    }

    /** The store stopped while the node runs: it could not start, or it failed. */
    private enum StoreStopped implements Command {
        INSTANCE
    }

    private final ActorSystem<Command> system;
    private final ActorRef<ManagerStore.Command> store;
    private final AtomicBoolean storeStopped;
    private final AtomicReference<String> misfit;
    private final Duration handOffBound;

    private PoolManagerNode(ActorSystem<Command> system, ActorRef<ManagerStore.Command> store,
                            AtomicBoolean storeStopped, AtomicReference<String> misfit, Duration handOffBound) {
        this.system = system;
        this.store = store;
        this.storeStopped = storeStopped;
        this.misfit = misfit;
        this.handOffBound = handOffBound;
    }

    /**
     * The longest a stopping manager spends handing the records no other manager holds to the others: 10 s, and the
     * longer of one second per 512 MiB of its store and one per 500 of the most records it can hold (a full store of
     * sole copies moves at least that fast on a busy 2-core machine: large records are bound by bytes, small ones by
     * the round trips of each copy). A hand-off that takes longer is cut short; what was not copied leaves with the
     * manager.
     */
    static Duration handOffBound(ManagerConfig config) {
        return handOffBound(config.layout(), config.storeBytes());
    }

    /** The longest a stopping manager with a store of {@code storeBytes} of {@code layout} spends handing over. */
    public static Duration handOffBound(dev.selene.engine.layout.Layout layout, long storeBytes) {
        long records = storeBytes / layout.slotBytes()
                / dev.selene.engine.codec.RecordFileFormat.pieceCount(layout, false);
        return Duration.ofSeconds(10 + Math.max(storeBytes >> 29, records / 500));
    }

    /**
     * The coordinated shutdown's task before the node leaves the cluster: the store hands the records no other
     * reachable manager holds to the others. Skipped when this node is no longer an up (or leaving) member (the
     * cluster downed it, or it never joined: then no directory would answer), and when its store has stopped.
     */
    private CompletionStage<Done> handOff() {
        MemberStatus status = Cluster.get(system).selfMember().status();
        boolean member = status == MemberStatus.up() || status == MemberStatus.weaklyUp()
                || status == MemberStatus.leaving();
        if (!member || storeStopped.get() || misfit.get() != null) {
            return CompletableFuture.completedFuture(Done.getInstance());
        }
        return AskPattern.<ManagerStore.Command, ManagerStore.HandedOff>ask(store, ManagerStore.HandOff::new,
                handOffBound, system.scheduler()).handle((done, failure) -> {
                    if (failure != null) {
                        store.tell(new ManagerStore.HandOffCutShort(handOffBound)); // it says how far it got
                    }
                    return Done.getInstance();
                });
    }

    /**
     * Starts a manager with {@code config} on an actor system with {@code pekko} settings (from
     * {@link PoolCluster#config}); it joins the cluster in the background.
     */
    public static PoolManagerNode start(ManagerConfig config, Config pekko) {
        AtomicBoolean storeStopped = new AtomicBoolean();
        AtomicReference<String> misfit = new AtomicReference<>();
        Duration handOff = handOffBound(config);
        // The hand-off runs before the node leaves the cluster: the phase waits for it as long as it may take (or
        // longer, where the application's settings say so).
        String phase = "pekko.coordinated-shutdown.phases.before-cluster-shutdown.timeout";
        long phaseSeconds = handOff.toSeconds() + 5;
        if (pekko.hasPath(phase)) {
            phaseSeconds = Math.max(phaseSeconds, pekko.getDuration(phase).toSeconds());
        }
        Config withHandOff = ConfigFactory.parseMap(Map.of(phase, phaseSeconds + "s")).withFallback(pekko);
        ActorSystem<Command> system = ActorSystem.create(guardian(config, storeStopped, misfit),
                PoolCluster.SYSTEM_NAME, withHandOff);
        try {
            ActorRef<ManagerStore.Command> store = AskPattern.<Command, ActorRef<ManagerStore.Command>>ask(system,
                    GetStore::new, Duration.ofSeconds(30), system.scheduler()).toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
            PoolManagerNode node = new PoolManagerNode(system, store, storeStopped, misfit, handOff);
            CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeClusterShutdown(),
                    "selene-pool-hand-off", node::handOff);
            // The store maps its memory (every page faulted in: seconds per few GiB on a loaded machine) and binds
            // its data port as it starts; one that cannot stops, and the node with it: wait for whichever comes
            // first. An ask to a store already stopped fails at once; the node's end then says what happened.
            Duration mapping = Duration.ofSeconds(60 + 4 * (config.storeBytes() >> 30));
            CompletableFuture<Boolean> answered = AskPattern.ask(store, ManagerStore.GetStatus::new, mapping,
                    system.scheduler()).toCompletableFuture().handle((status, failure) -> failure == null);
            CompletableFuture.anyOf(answered, system.getWhenTerminated().toCompletableFuture())
                    .get(mapping.toSeconds() + 5, TimeUnit.SECONDS);
            if (Boolean.TRUE.equals(answered.getNow(null))) {
                return node;
            }
            throw new IllegalStateException(ended(system) ? "its store could not start (an earlier log line says why)"
                    : "its store did not answer within " + mapping.toSeconds() + " s");
        } catch (Exception e) {
            system.terminate();
            ended(system); // its ports are free again when this returns
            if (misfit.get() != null) {
                throw new IllegalArgumentException(misfit.get()); // a setting at fault: one line naming it
            }
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException("the pool manager did not start: " + cause.getMessage(), e);
        }
    }

    /** Waits up to 30 s for {@code system} to end; whether it did. */
    private static boolean ended(ActorSystem<?> system) {
        try {
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static Behavior<Command> guardian(ManagerConfig config, AtomicBoolean storeStopped,
                                              AtomicReference<String> misfit) {
        return Behaviors.setup(ctx -> {
            String node = ctx.getSystem().address().hostPort();
            PoolMetrics metrics = new PoolMetrics(node);
            PoolSecurity security = PoolSecurity.from(ctx.getSystem().settings().config());
            if (security.tls()) {
                metrics.countRefusals(security.poolTls());
            }
            ClusterSharding.get(ctx.getSystem()).init(Entity.of(PoolDirectory.TYPE,
                    entity -> PoolDirectory.create(entity.getEntityId(), config)).withRole(PoolCluster.MANAGER_ROLE));
            ActorRef<ManagerStore.Command> store = ctx.spawn(ManagerStore.create(config, metrics), "pool-store");
            // A manager without its store would take no record: it stops with it.
            ctx.watchWith(store, StoreStopped.INSTANCE);
            // When the set of stores changes (a manager joined, left or died) every directory entity is woken, so
            // each checks its replicas even when no host is using its shard.
            ctx.getSystem().receptionist().tell(Receptionist.subscribe(ManagerStore.KEY, ctx.messageAdapter(
                    Receptionist.Listing.class, l -> new StoresListed(l.getServiceInstances(ManagerStore.KEY)))));
            ClusterSharding sharding = ClusterSharding.get(ctx.getSystem());
            Set<ActorRef<ManagerStore.Command>> listed = new HashSet<>();
            Set<ActorRef<ManagerStore.Command>> checked = new HashSet<>();
            return Behaviors.receive(Command.class)
                    .onMessage(GetStore.class, g -> {
                        g.replyTo().tell(store);
                        return Behaviors.same();
                    })
                    .onMessage(StoreStopped.class, st -> {
                        storeStopped.set(true);
                        ctx.getLog().error("the pool manager stops: its store stopped");
                        return Behaviors.stopped();
                    })
                    .onMessage(StoresListed.class, l -> {
                        logListing(ctx.getLog(), ctx.getSystem().address(), listed, l.stores());
                        listed.clear();
                        listed.addAll(l.stores());
                        for (ActorRef<ManagerStore.Command> other : l.stores()) {
                            if (!other.equals(store) && checked.add(other)) {
                                ctx.ask(ManagerStore.StoreStatus.class, other, Duration.ofSeconds(5),
                                        ManagerStore.GetStatus::new, (status, failure) -> new PeerAnswered(other,
                                                status));
                            }
                        }
                        for (String id : PoolDirectory.entityIds(config.directoryShards())) {
                            sharding.entityRefFor(PoolDirectory.TYPE, id).tell(PoolDirectory.Wake.INSTANCE);
                        }
                        return Behaviors.same();
                    })
                    .onMessage(PeerAnswered.class, p -> {
                        if (p.status() == null) {
                            checked.remove(p.store()); // asked again when the listing next changes
                            return Behaviors.same();
                        }
                        String conflict = conflict(config, p.status(),
                                storeAddress(p.store(), ctx.getSystem().address()));
                        if (conflict == null || !youngerThan(ctx.getSystem(), p.store())) {
                            // the younger of two managers that do not fit stops; the older one goes on (asked again
                            // when the listing next changes, in case this one's membership was not known yet)
                            checked.remove(p.store());
                            return Behaviors.same();
                        }
                        misfit.set(conflict);
                        ctx.getLog().error("the pool manager stops: {}", conflict);
                        return Behaviors.stopped();
                    })
                    .build();
        });
    }

    /**
     * Why this manager, with {@code config}, cannot be in one pool with the manager at {@code at} whose store
     * answered {@code other}, in one line naming the setting; null when they fit.
     */
    static String conflict(ManagerConfig config, ManagerStore.StoreStatus other, String at) {
        if (!config.layout().name().equals(other.layout())) {
            return "selene.layout = '" + config.layout().name() + "' is invalid: the pool's manager at " + at
                    + " holds the " + other.layout() + " layout, and records cannot move between layouts; allowed: "
                    + "the layout of the pool's managers (" + other.layout() + ")";
        }
        if (config.replicas() != other.replicas()) {
            return "selene.manager.replicas = " + config.replicas() + " is invalid: the pool's manager at " + at
                    + " keeps " + other.replicas() + "; allowed: the same on every manager (" + other.replicas()
                    + ")";
        }
        return null;
    }

    /**
     * Whether this node joined the cluster after the node of {@code store}; false when that node is no member now
     * (it may have stopped itself already: then this one goes on).
     */
    private static boolean youngerThan(ActorSystem<?> system, ActorRef<?> store) {
        Cluster cluster = Cluster.get(system);
        for (org.apache.pekko.cluster.Member m : cluster.state().getMembers()) {
            if (m.address().equals(store.path().address())) {
                return !cluster.selfMember().isOlderThan(m);
            }
        }
        return false;
    }

    /**
     * One line for a change of the reachable stores (the directory's shards each log only when records lost a
     * holder): how many there are now, which came and which went.
     */
    private static void logListing(Logger log, Address self, Set<ActorRef<ManagerStore.Command>> before,
                                   Set<ActorRef<ManagerStore.Command>> now) {
        List<String> came = now.stream().filter(s -> !before.contains(s)).map(s -> storeAddress(s, self))
                .sorted().toList();
        List<String> went = before.stream().filter(s -> !now.contains(s)).map(s -> storeAddress(s, self))
                .sorted().toList();
        if (!came.isEmpty() || !went.isEmpty()) {
            log.info("pool stores reachable: {}{}{}", now.size(), came.isEmpty() ? "" : "; came: " + came,
                    went.isEmpty() ? "" : "; gone or unreachable: " + went);
        }
    }

    /** Where a store runs, {@code host:port} (this node's address for its own store). */
    private static String storeAddress(ActorRef<?> store, Address self) {
        Address a = store.path().address().hasGlobalScope() ? store.path().address() : self;
        return a.getHost().orElse("?") + ":" + a.getPort().map(String::valueOf).orElse("?");
    }

    /** The actor system (for an admin server beside it). */
    public ActorSystem<?> system() {
        return system;
    }

    /** This node's cluster address as Pekko prints it, {@code selene@host:port}. */
    public String address() {
        return system.address().hostPort();
    }

    /** Whether this node is an up member of the cluster. */
    public boolean isUp() {
        return Cluster.get(system).selfMember().status() == MemberStatus.up();
    }

    /** The store's actor, for tests of this package that speak to it as a directory entity would. */
    ActorRef<ManagerStore.Command> store() {
        return store;
    }

    /** The store's figures. */
    public CompletionStage<ManagerStore.StoreStatus> status() {
        return AskPattern.ask(store, ManagerStore.GetStatus::new, Duration.ofSeconds(5), system.scheduler());
    }

    /** Runs the store's max-age sweep now; the records that expired (none with max age off). */
    public CompletionStage<ManagerStore.Expired> expireNow() {
        return AskPattern.ask(store, ManagerStore.ExpireNow::new, Duration.ofSeconds(5), system.scheduler());
    }

    /**
     * Checks the store's accounting: empty when every invariant holds (slots balance, each held slot owned once, the
     * recency index matches the held records), else a sentence naming the first that does not.
     */
    public CompletionStage<String> checkInvariants() {
        return AskPattern.ask(store, ManagerStore.CheckInvariants::new, Duration.ofSeconds(5), system.scheduler());
    }

    /**
     * Why this node stopped because its settings do not fit the pool's other managers (another layout, another
     * replica count), in one line naming the setting; null when it did not.
     */
    public String misfit() {
        return misfit.get();
    }

    /** Whether the node stopped because its store did (it could not start, or failed), not because it was asked. */
    public boolean storeStopped() {
        return storeStopped.get();
    }

    /** Whether this node's actor system has terminated. */
    public boolean isTerminated() {
        return system.whenTerminated().isCompleted();
    }

    /**
     * The directory entities this manager runs now ({@code shard-N}: the namespaces whose directory shard is N), in
     * order.
     */
    public CompletionStage<List<String>> directoryEntities() {
        return AskPattern.<ClusterShardingQuery, ShardRegion.CurrentShardRegionState>ask(
                ClusterSharding.get(system).shardState(), r -> new GetShardRegionState(PoolDirectory.TYPE, r),
                Duration.ofSeconds(5), system.scheduler()).thenApply(state -> {
                    List<String> ids = new ArrayList<>();
                    state.getShards().forEach(s -> ids.addAll(s.getEntityIds()));
                    ids.sort(Comparator.comparingInt(id -> Integer.parseInt(id.substring("shard-".length()))));
                    return ids;
                });
    }

    /**
     * Hands the records no other manager holds to the others, leaves the cluster and stops, waiting up to 30 s more
     * than the hand-off may take.
     */
    @Override
    public void close() {
        system.terminate();
        long wait = 30 + handOffBound.toSeconds();
        try {
            system.getWhenTerminated().toCompletableFuture().get(wait, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("the pool manager did not stop within " + wait + " s");
        } catch (Exception e) {
            Thread.currentThread().interrupt();
        }
    }
}
