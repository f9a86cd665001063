package dev.selene.actors.api;

import com.typesafe.config.Config;
import dev.selene.actors.cache.HostCache;
import dev.selene.actors.census.ActorCensus;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.store.RemoteTier;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.value.AbandonReason;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.EvictOutcome;
import dev.selene.actors.value.ExpiryReport;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RecordPage;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.RetryReason;
import dev.selene.actors.value.Tier;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.RecordIo;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DeviceCopiers;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.BehaviorInterceptor;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.Signal;
import org.apache.pekko.actor.typed.Terminated;
import org.apache.pekko.actor.typed.TypedActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * The Java API of one cache node: publish, look up and restore records, each answered by a
 * {@link CompletionStage}. It either owns an actor system of its own (the simple path: {@link #start}) or runs
 * the node inside an application's existing {@link ActorSystem} ({@link #startIn}, or {@link Selene#get}).
 */
public final class SeleneCache implements AutoCloseable {

    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(30);

    /** What a call to a closed cache fails with. */
    private static final String CLOSED = "the cache is closed";

    /** The longest a node may take to start (the disk tier's recovery included). */
    public static final Duration START_TIMEOUT = Duration.ofMinutes(5);

    /**
     * How long the actor system's remoting is given to close once the node itself has stopped (its cluster leave and
     * its connections' goodbyes take well under a second when they work).
     */
    private static final Duration REMOTING_STOP = Duration.ofSeconds(15);

    /** The longest a drain at shutdown may take. */
    public static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(2);

    private final java.util.concurrent.atomic.AtomicBoolean closing = new java.util.concurrent.atomic.AtomicBoolean();
    /** Completes when the first {@link #close()} has ended. */
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final ActorSystem<?> system;
    private final boolean ownsSystem;
    private final ActorRef<HostCache.Command> node;
    private final CacheConfig config;
    private final HostCache.Parts parts;
    private final boolean ownsCopier;
    /**
     * Completes once the node has stopped: told by the node itself when it is the guardian of a system this facade
     * owns, else by a system actor that watches it.
     */
    private final CompletableFuture<Void> nodeStopped;
    /** The serving node's way to its catalog for publications (set once it is ready; null for a disabled node). */
    private volatile HostCache.DirectPublish direct;
    /**
     * The answers callers still wait for: failed at once when the actor system stops, whose scheduler then no longer
     * runs the asks' timeouts (they would wait for ever).
     */
    private final Set<CompletableFuture<?>> awaited = ConcurrentHashMap.newKeySet();
    /** Why calls are refused (the cache was closed, or its node stopped), or null while it serves. */
    private volatile String stoppedBecause;
    /**
     * Set when {@link #close()} begins to stop the node; calls go on being answered until it has stopped (a stop
     * task of the actor system may still ask the node, as a drain at shutdown does).
     */
    private volatile boolean closeRequested;
    /** The drain at shutdown, once started (by {@link #close()} or the process's coordinated shutdown). */
    private final AtomicReference<CompletableFuture<Void>> shutdownDrain = new AtomicReference<>();

    private SeleneCache(ActorSystem<?> system, boolean ownsSystem, ActorRef<HostCache.Command> node,
                        CacheConfig config, HostCache.Parts parts, boolean ownsCopier) {
        this(system, ownsSystem, node, config, parts, ownsCopier, null);
    }

    private SeleneCache(ActorSystem<?> system, boolean ownsSystem, ActorRef<HostCache.Command> node,
                        CacheConfig config, HostCache.Parts parts, boolean ownsCopier,
                        CompletableFuture<Void> nodeStopped) {
        this.system = system;
        this.ownsSystem = ownsSystem;
        this.node = node;
        this.config = config;
        this.parts = parts;
        this.ownsCopier = ownsCopier;
        system.getWhenTerminated().thenRun(() -> failAwaited("the cache has stopped: its actor system '"
                + system.name() + "' terminated"));
        if (nodeStopped == null) {
            // The node lives in another's system, which may stop it (its parent stopping, or the node failing): the
            // answers it owes then fail at once too.
            nodeStopped = new CompletableFuture<>();
            watchNode(nodeStopped);
            nodeStopped.thenRun(() -> failAwaited("the cache has stopped: its node '" + node.path().name()
                    + "' was stopped"));
        }
        this.nodeStopped = nodeStopped;
    }

    /** Completes {@code stopped} once the node has stopped (at once if it already has, or its system is gone). */
    private void watchNode(CompletableFuture<Void> stopped) {
        try {
            system.systemActorOf(Behaviors.<Object>setup(ctx -> {
                ctx.watch(node);
                return Behaviors.receiveSignal((c, s) -> {
                    if (s instanceof Terminated) {
                        stopped.complete(null);
                        return Behaviors.stopped();
                    }
                    return Behaviors.same();
                });
            }), "watch-" + node.path().name() + "-" + System.nanoTime(), Props.empty());
        } catch (IllegalStateException e) {
            stopped.complete(null); // a system that is stopping refuses new actors; the node stops with it
        }
    }

    /** Starts a node in an actor system of its own, with the device its configuration selects (closed with it). */
    public static SeleneCache start(CacheConfig config) {
        return own(config, HostCache.Parts.of(DeviceCopiers.select(config.device())), true,
                CacheSettings.standaloneSystemConfig(), "selene");
    }

    /** Starts a node in an actor system of its own on the caller's device copier, which the caller closes. */
    public static SeleneCache start(CacheConfig config, DeviceCopier copier) {
        return own(config, HostCache.Parts.of(copier), false, CacheSettings.standaloneSystemConfig(), "selene");
    }

    /**
     * Starts a node whose disk tier does its file I/O through {@code recordIo} (given the blocking executor):
     * the seam through which tests inject disk faults.
     */
    public static SeleneCache start(CacheConfig config, DeviceCopier copier,
                                    Function<Executor, RecordIo> recordIo) {
        return own(config, HostCache.Parts.of(copier).withRecordIo(recordIo), false,
                CacheSettings.standaloneSystemConfig(), "selene");
    }

    /** Starts a node in an actor system of its own with the given Pekko configuration and system name. */
    public static SeleneCache start(CacheConfig config, DeviceCopier copier, Config pekko, String name) {
        return own(config, HostCache.Parts.of(copier), false, pekko, name);
    }

    /** Starts a node over {@code parts} in an actor system of its own. */
    public static SeleneCache start(CacheConfig config, HostCache.Parts parts) {
        return own(config, parts, false, CacheSettings.standaloneSystemConfig(), "selene");
    }

    /**
     * Starts a node inside the application's {@code system} (as a system actor named {@code name}); closing the
     * cache stops the node and leaves the system running. The caller keeps and closes {@code copier}.
     */
    public static SeleneCache startIn(ActorSystem<?> system, CacheConfig config, DeviceCopier copier, String name) {
        HostCache.Parts parts = HostCache.Parts.of(copier);
        ActorRef<HostCache.Command> node = system.systemActorOf(HostCache.create(config, parts), name,
                ActorCensus.MAILBOX);
        return awaitReady(new SeleneCache(system, false, node, config, parts, false));
    }

    /**
     * A facade over a node the application spawned itself ({@code HostCache.create(config, parts)} under its own
     * guardian); waits until it serves.
     */
    public static SeleneCache over(ActorSystem<?> system, ActorRef<HostCache.Command> node, CacheConfig config,
                                   HostCache.Parts parts) {
        return awaitReady(new SeleneCache(system, false, node, config, parts, false));
    }

    private static SeleneCache own(CacheConfig config, HostCache.Parts parts, boolean ownsCopier, Config pekko,
                                   String name) {
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        ActorSystem<HostCache.Command> system;
        CoordinatedShutdown shutdown;
        try {
            if (config.poolEnabled()) {
                // A pool host is a member of the pool's cluster: the remote tier says how its system joins the
                // managers.
                RemoteTier remote = parts.remoteTierOrInstalled();
                if (remote == null) {
                    throw new SettingsException(HostCache.NO_REMOTE_TIER);
                }
                RemoteTier.SystemSetup setup = remote.system(pekko, name, config);
                pekko = setup.settings();
                name = setup.name();
            }
            system = ActorSystem.create(Behaviors.intercept(() -> new StopNotice(stopped),
                    HostCache.create(config, parts)), name, pekko, ActorCensus.MAILBOX);
            // Loaded now, so that the JVM's shutdown hook it registers (as the configuration asks) stops the node
            // when the process is ended from outside; Pekko loads it only on first use, and a bare node never uses it.
            shutdown = CoordinatedShutdown.get(system);
        } catch (RuntimeException | Error e) {
            if (ownsCopier) {
                // No cache holds the copier this start made yet (a cache's stop closes it): a caller that retries
                // the start must not leak a device context each try.
                parts.copier().close();
            }
            throw e;
        }
        SeleneCache cache = awaitReady(new SeleneCache(system, true, system, config, parts, ownsCopier, stopped));
        if (cache.drainsAtShutdown()) {
            // Ended from outside, the process drains as close() would, before the system stops (within the phase's
            // timeout, set to cover the drain); a close() at the same time joins this drain.
            shutdown.addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "selene-drain-at-shutdown",
                    () -> cache.drainAtShutdown().thenApply(done -> Done.getInstance()));
        }
        return cache;
    }

    private static SeleneCache awaitReady(SeleneCache cache) {
        HostCache.Readiness r;
        try {
            r = AskPattern.<HostCache.Command, HostCache.Readiness>ask(cache.node, HostCache.WhenReady::new,
                    START_TIMEOUT, cache.system.scheduler()).toCompletableFuture()
                    .get(START_TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            cache.stopQuietly();
            throw new IllegalStateException("cache node did not start within " + START_TIMEOUT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cache.stopQuietly();
            throw new IllegalStateException("interrupted while the cache node started");
        }
        if (!r.ready()) {
            cache.stopQuietly();
            throw switch (r.fault()) {
                case SETTING -> new SettingsException(r.failure());
                case ENVIRONMENT -> new EnvironmentException(r.failure());
                case NODE -> new IllegalStateException(r.failure());
            };
        }
        cache.direct = r.direct();
        return cache;
    }

    private void stopQuietly() {
        try {
            stop();
        } catch (RuntimeException ignored) {
            // already failing to start; the caller gets the start failure
        }
    }

    /** Publishes a record from its GPU snapshot, which must stay valid until the answer; never waits for slots. */
    public CompletionStage<PublishResult> publish(RecordSpec spec, DevicePlacement snapshot) {
        return publish(spec, snapshot, Duration.ZERO);
    }

    /**
     * Publishes a record, letting the node wait for slots up to {@code patience} (what is left of the snapshot's
     * lease); answers {@code Abandoned} when that runs out first. A serving node takes it straight into its catalog,
     * not through the node's own mailbox: it is ordered with this cache's other calls only when the caller awaits
     * their answers first.
     */
    public CompletionStage<PublishResult> publish(RecordSpec spec, DevicePlacement snapshot, Duration patience) {
        if (stoppedBecause != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(stoppedBecause));
        }
        String unusable = deviceUnusable();
        if (unusable != null) {
            node.tell(new HostCache.DeviceRefused(true));
            return CompletableFuture.completedFuture(new PublishResult.Failed(AbandonReason.COPY_FAILED.label(),
                    unusable));
        }
        Duration timeout = ASK_TIMEOUT.plus(patience);
        HostCache.DirectPublish d = direct;
        CompletionStage<PublishResult> sent = d == null ? null : d.publish(spec, snapshot, patience, timeout,
                system.scheduler());
        return sent != null ? awaited(sent) : ask(r -> new HostCache.Publish(spec, snapshot, patience, r), timeout);
    }

    /**
     * The longest cached match of {@code chain} (keys root first). A namespace that is not one, or a null chain, is a
     * failed stage with an {@link IllegalArgumentException} saying so; the node never sees it.
     */
    public CompletionStage<LookupResult> lookup(String namespace, long[] chain) {
        String bad = badChain(namespace, chain);
        if (bad != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(bad));
        }
        return ask(r -> new HostCache.Lookup(namespace, chain.clone(), r), ASK_TIMEOUT);
    }

    /** Why {@code namespace} and {@code chain} cannot be looked up, or null when they can. */
    private static String badChain(String namespace, long[] chain) {
        String problem = RecordKey.namespaceProblem(namespace);
        if (problem != null) {
            return problem;
        }
        return chain == null ? "chain is null; allowed: the chain's keys, root first" : null;
    }

    /**
     * Restores the match of {@code chain} into {@code targets} (one per chain record) unless recomputing is faster.
     * Answers {@code FAILED} at once, saying why, when the device copier has become unusable (its CUDA context
     * failed): the caller recomputes.
     */
    public CompletionStage<RestoreResult> restore(String namespace, long[] chain, List<DevicePlacement> targets,
                                                  Duration recompute) {
        String bad = badChain(namespace, chain);
        if (bad == null && (targets == null || targets.stream().anyMatch(Objects::isNull))) {
            bad = "targets is null or holds null; allowed: a device placement per chain record";
        } else if (bad == null && (recompute == null || recompute.isNegative())) {
            bad = "recompute = " + recompute + " is invalid; allowed: the time recomputing the prefix would take, "
                    + "0 or more";
        }
        if (bad != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(bad));
        }
        if (stoppedBecause != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(stoppedBecause));
        }
        String unusable = deviceUnusable();
        if (unusable != null) {
            node.tell(new HostCache.DeviceRefused(false));
            return CompletableFuture.completedFuture(RestoreResult.of(RestoreResult.Outcome.FAILED, unusable));
        }
        return ask(r -> new HostCache.Restore(namespace, chain.clone(), List.copyOf(targets), recompute, r),
                ASK_TIMEOUT);
    }

    /**
     * Why the node no longer moves bytes to or from the device (its copier became unusable: a failed CUDA context
     * fails every later call), or null while it does. Publications and restores are then refused at once with this
     * reason, before any slot is taken; lookups, drains and the admin API go on.
     */
    private String deviceUnusable() {
        DeviceCopier copier = parts.copier();
        return copier.isAvailable() ? null : "the device copier is unusable: " + copier.unavailabilityCause();
    }

    /** Counts a publication the caller gave up while it was told {@code Retry(reason)}; neither may be null. */
    public void reportAbandoned(RecordKey key, RetryReason reason) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(reason, "reason");
        node.tell(new HostCache.ReportAbandoned(key, reason));
    }

    /** Spills every dirty record to disk, ancestors first, within {@code timeout}. */
    public CompletionStage<DrainReport> drain(Duration timeout) {
        return ask(r -> new HostCache.Drain(timeout, r), timeout.plusSeconds(5));
    }

    /** The node's status. */
    public CompletionStage<CacheStatus> status() {
        return ask(HostCache.GetStatus::new, ASK_TIMEOUT);
    }

    /**
     * A page of records ordered by namespace then key; null {@code namespace} or {@code tier} means all. A negative
     * {@code offset} or {@code limit} is a failed stage with an {@link IllegalArgumentException}.
     */
    public CompletionStage<RecordPage> records(String namespace, Tier tier, int offset, int limit) {
        if (offset < 0 || limit < 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("offset " + offset + " and limit "
                    + limit + " are invalid; allowed: 0 or more each"));
        }
        return ask(r -> new HostCache.ListRecords(namespace, tier, offset, limit, r), ASK_TIMEOUT);
    }

    /** One record: its state, chain and where it lives. */
    public CompletionStage<RecordDescription> describe(RecordKey key) {
        return ask(r -> new HostCache.DescribeRecord(key, r), ASK_TIMEOUT);
    }

    /** Removes one record and its descendants from every tier. */
    public CompletionStage<EvictOutcome> evict(RecordKey key) {
        return ask(r -> new HostCache.EvictRecord(key, r), ASK_TIMEOUT);
    }

    /** Runs the max-age sweep now. */
    public CompletionStage<ExpiryReport> expireNow() {
        return ask(HostCache.ExpireNow::new, ASK_TIMEOUT);
    }

    /**
     * A self-check of the node's bookkeeping (slot totals, pins, no file of a record without its parent's, no
     * record in two states): the first broken invariant, or an empty string. For tests (the test artifact's
     * {@code NodeInvariants}), not part of the API.
     */
    CompletionStage<String> invariantViolation() {
        return ask(HostCache.CheckInvariants::new, ASK_TIMEOUT);
    }

    private <T> CompletionStage<T> ask(Function<ActorRef<T>, HostCache.Command> message, Duration timeout) {
        String stopped = stoppedBecause;
        if (stopped != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(stopped));
        }
        return awaited(AskPattern.ask(node, message::apply, timeout, system.scheduler()));
    }

    /** {@code answer}, or a failure once the cache is closed or its actor system stops first. */
    private <T> CompletionStage<T> awaited(CompletionStage<T> answer) {
        CompletableFuture<T> out = new CompletableFuture<>();
        awaited.add(out);
        answer.whenComplete((r, e) -> {
            if (e != null) {
                out.completeExceptionally(e);
            } else {
                out.complete(r);
            }
        });
        out.whenComplete((r, e) -> awaited.remove(out));
        String stopped = stoppedBecause;
        if (stopped != null) {
            out.completeExceptionally(new IllegalStateException(stopped));
        }
        return out;
    }

    /**
     * Refuses every later call with {@code why}, and fails the answers still awaited with it: once the node has
     * stopped (closed, or its actor system gone) nothing answers them, and the asks' timeouts may not run either.
     * The first reason given stays; after a {@link #close()} it is that the cache is closed.
     */
    private void failAwaited(String why) {
        if (stoppedBecause == null) {
            stoppedBecause = closeRequested ? CLOSED : why;
        }
        IllegalStateException failure = new IllegalStateException(stoppedBecause);
        for (CompletableFuture<?> f : awaited) {
            f.completeExceptionally(failure);
        }
    }

    /** Whether this cache drains at shutdown: asked to, and with a durable tier (a disk, or the pool) to drain to. */
    private boolean drainsAtShutdown() {
        return config.drainOnShutdown() && (config.diskDir() != null || config.poolEnabled());
    }

    /** The drain at shutdown, started by the first to ask (its outcome logged once); never fails. */
    private CompletableFuture<Void> drainAtShutdown() {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> running = shutdownDrain.compareAndExchange(null, mine);
        if (running != null) {
            return running;
        }
        drain(DRAIN_TIMEOUT).whenComplete((report, e) -> {
            if (e != null) {
                LoggerFactory.getLogger(SeleneCache.class).warn("drain at shutdown failed: {}",
                        e instanceof CompletionException c && c.getCause() != null ? c.getCause().getMessage()
                                : e.getMessage());
            } else if (report.skipped() > 0 || report.timedOut()) {
                // what was asked for did not happen in full: records held only in memory are lost with the process
                LoggerFactory.getLogger(SeleneCache.class).warn("drain at shutdown: {} records written, {} skipped{}"
                        + ": the records not written, held only in memory, are lost", report.written(),
                        report.skipped(), report.timedOut() ? " (timed out)" : "");
            } else {
                LoggerFactory.getLogger(SeleneCache.class).info("drained at shutdown: {} records written",
                        report.written());
            }
            mine.complete(null);
        });
        return mine;
    }

    public CacheConfig config() {
        return config;
    }

    public Layout layout() {
        return config.layout();
    }

    public DeviceCopier copier() {
        return parts.copier();
    }

    public CacheCounters counters() {
        return parts.counters();
    }

    public TraceBook traces() {
        return parts.traces();
    }

    /** The actor system the node runs in (the application's, or the one the cache owns). */
    public ActorSystem<?> system() {
        return system;
    }

    /**
     * Stops the node and waits for it. Records held only in memory are lost unless the configuration asks to
     * drain on shutdown, in which case they are written to the node's durable tier first (its disk, or the pool
     * when it has no disk), within {@link #DRAIN_TIMEOUT}.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            try { // a close at the same time as another returns when the other has stopped the node
                closed.get(DRAIN_TIMEOUT.toSeconds() + 60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // the first close failed or is still waiting: it reports that itself
            }
            return;
        }
        try {
            closeOnce();
        } finally {
            closed.complete(null);
        }
    }

    private void closeOnce() {
        if (drainsAtShutdown()) {
            try {
                drainAtShutdown().get(DRAIN_TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                LoggerFactory.getLogger(SeleneCache.class).warn("drain at shutdown did not end within {} s",
                        DRAIN_TIMEOUT.toSeconds() + 10);
            }
        }
        stop();
    }

    private void stop() {
        closeRequested = true;
        try {
            if (ownsSystem) {
                system.terminate();
                // Whichever comes first: a node that stopped by itself may leave its stop unseen by the notice.
                CompletableFuture<Void> terminated = system.getWhenTerminated().toCompletableFuture()
                        .thenApply(done -> null);
                CompletableFuture.anyOf(nodeStopped, terminated).get(30, TimeUnit.SECONDS);
                try {
                    terminated.get(REMOTING_STOP.toSeconds(), TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    // The node itself has stopped; what is left is the actor system's remoting, whose streams can
                    // outlast their deadlines after a refused or broken TLS connection (a known limit of Pekko 1.x,
                    // see "Known limits" in docs/pool.md). Its threads end with the process.
                    LoggerFactory.getLogger(SeleneCache.class).warn("the cache node stopped, but its actor system's "
                            + "remoting did not finish closing within {} s; going on without it",
                            REMOTING_STOP.toSeconds());
                }
            } else {
                stopNode();
                failAwaited(CLOSED);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cache node did not stop within 30 s", e);
        } finally {
            if (ownsCopier) {
                parts.copier().close();
            }
        }
    }

    /**
     * Stops a node living in someone else's system and waits until it has stopped, or until that system has stopped
     * (the node with it).
     */
    private void stopNode() throws ExecutionException, InterruptedException, TimeoutException {
        node.tell(new HostCache.Stop());
        CompletableFuture.anyOf(nodeStopped, system.getWhenTerminated().toCompletableFuture())
                .get(30, TimeUnit.SECONDS);
    }

    /** Completes a future once the behaviour it wraps has stopped (after the behaviour's own stop handling). */
    private static final class StopNotice extends BehaviorInterceptor<HostCache.Command, HostCache.Command> {
        private final CompletableFuture<Void> stopped;

        StopNotice(CompletableFuture<Void> stopped) {
            super(HostCache.Command.class);
            this.stopped = stopped;
        }

        @Override
        public Behavior<HostCache.Command> aroundReceive(TypedActorContext<HostCache.Command> ctx,
                                                     HostCache.Command msg,
                                                     ReceiveTarget<HostCache.Command> target) {
            return target.apply(ctx, msg);
        }

        @Override
        public Behavior<HostCache.Command> aroundSignal(TypedActorContext<HostCache.Command> ctx, Signal signal,
                                                    SignalTarget<HostCache.Command> target) {
            Behavior<HostCache.Command> next = target.apply(ctx, signal);
            if (signal instanceof PostStop) {
                stopped.complete(null);
            }
            return next;
        }
    }
}
