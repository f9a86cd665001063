package dev.selene.actors.api;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.actors.cache.HostCache;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.intake.IntakeSizing;
import dev.selene.transport.host.HostMemory;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DeviceCopiers;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The Java API of one cache node: publish, look up and restore records, each answered by a
 * {@link CompletionStage}. It owns the actor system that hosts the node.
 */
public final class SeleneCache implements AutoCloseable {

    /** Default number of records whose traces are kept. */
    public static final int DEFAULT_TRACE_RECORDS = 65_536;

    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(30);

    private final ActorSystem<HostCache.Command> system;
    private final CacheConfig config;
    private final DeviceCopier copier;
    private final boolean ownsCopier;
    private final CacheCounters counters;
    private final TraceBook traces;

    private SeleneCache(CacheConfig config, DeviceCopier copier, boolean ownsCopier, Config akka, String name) {
        this(config, copier, ownsCopier, akka, name, HostCache.DEFAULT_RECORD_IO);
    }

    private SeleneCache(CacheConfig config, DeviceCopier copier, boolean ownsCopier, Config akka, String name,
                        java.util.function.Function<java.util.concurrent.Executor, dev.selene.transport.disk.RecordIo>
                                recordIo) {
        this.config = config;
        this.copier = copier;
        this.ownsCopier = ownsCopier;
        this.counters = new CacheCounters();
        this.traces = new TraceBook(DEFAULT_TRACE_RECORDS);
        java.util.concurrent.CompletableFuture<Void> ready = new java.util.concurrent.CompletableFuture<>();
        IntakeSizing sizing = null;
        HostMemory host = null;
        if (config.enabled() && !config.poolEnabled()) {
            sizing = IntakeSizing.compute(config.layout(), config.concurrency(), config.effectiveWindowSlots(),
                    config.warmBytes(), config.hostBudgetBytes());
            host = HostMemory.allocate(config.layout(), sizing.totalSlots());
        }
        this.system = ActorSystem.create(HostCache.create(config, sizing, host, copier, counters, traces, ready,
                recordIo), name, akka);
        try {
            ready.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            stopQuietly();
            throw e.getCause() instanceof IllegalArgumentException iae ? iae
                    : new IllegalStateException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            stopQuietly();
            throw new IllegalStateException("cache node did not start within " + START_TIMEOUT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopQuietly();
            throw new IllegalStateException("interrupted while the cache node started");
        }
    }

    /** The longest a node may take to start (the disk tier's recovery included). */
    public static final Duration START_TIMEOUT = Duration.ofMinutes(5);

    /** The longest a drain at shutdown may take (B8). */
    public static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(2);

    private void stopQuietly() {
        system.terminate();
        try {
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // already failing to start; the caller gets the start failure
        }
        if (ownsCopier) {
            copier.close();
        }
    }

    /** Starts a node with the device its configuration selects; closing the node closes that device. */
    public static SeleneCache start(CacheConfig config) {
        DeviceCopier copier = DeviceCopiers.select(config.device());
        return new SeleneCache(config, copier, true, ConfigFactory.load(), "selene");
    }

    /** Starts a node on the caller's device copier, which the caller keeps and closes. */
    public static SeleneCache start(CacheConfig config, DeviceCopier copier) {
        return new SeleneCache(config, copier, false, ConfigFactory.load(), "selene");
    }

    /**
     * Starts a node whose disk tier does its file I/O through {@code recordIo} (given the blocking executor):
     * the seam through which tests inject disk faults.
     */
    public static SeleneCache start(CacheConfig config, DeviceCopier copier,
                                    java.util.function.Function<java.util.concurrent.Executor,
                                            dev.selene.transport.disk.RecordIo> recordIo) {
        return new SeleneCache(config, copier, false, ConfigFactory.load(), "selene", recordIo);
    }

    /** Starts a node on the caller's device copier with the given Pekko configuration and system name. */
    public static SeleneCache start(CacheConfig config, DeviceCopier copier, Config pekko, String name) {
        return new SeleneCache(config, copier, false, pekko, name);
    }

    /** Publishes a record from its GPU snapshot, which must stay valid until the answer. */
    public CompletionStage<PublishResult> publish(RecordSpec spec, DevicePlacement snapshot) {
        return AskPattern.ask(system, r -> new HostCache.Publish(spec, snapshot, r), ASK_TIMEOUT,
                system.scheduler());
    }

    /** The longest cached match of {@code chain} (keys root first). */
    public CompletionStage<LookupResult> lookup(String namespace, long[] chain) {
        return AskPattern.ask(system, r -> new HostCache.Lookup(namespace, chain.clone(), r), ASK_TIMEOUT,
                system.scheduler());
    }

    /** Restores the match of {@code chain} into {@code targets} (one per chain record) unless recomputing is faster. */
    public CompletionStage<RestoreResult> restore(String namespace, long[] chain, List<DevicePlacement> targets,
                                                  Duration recompute) {
        return AskPattern.ask(system, r -> new HostCache.Restore(namespace, chain.clone(), List.copyOf(targets),
                recompute, r), ASK_TIMEOUT, system.scheduler());
    }

    /** Counts a publication the caller gave up while it was told to retry, with its bounded reason. */
    public void reportAbandoned(RecordKey key, String reason) {
        system.tell(new HostCache.ReportAbandoned(key, reason));
    }

    /** Spills every parked record to disk, ancestors first, within {@code timeout} (B8). */
    public CompletionStage<dev.selene.actors.spill.SpillScheduler.DrainReport> drain(Duration timeout) {
        return AskPattern.ask(system, r -> new HostCache.Drain(timeout, r), timeout.plusSeconds(5),
                system.scheduler());
    }

    /** The node's status. */
    public CompletionStage<CacheStatus> status() {
        return AskPattern.ask(system, HostCache.GetStatus::new, ASK_TIMEOUT, system.scheduler());
    }

    public CacheConfig config() {
        return config;
    }

    public Layout layout() {
        return config.layout();
    }

    public DeviceCopier copier() {
        return copier;
    }

    public CacheCounters counters() {
        return counters;
    }

    public TraceBook traces() {
        return traces;
    }

    public ActorSystem<HostCache.Command> system() {
        return system;
    }

    /**
     * Stops the node and waits for it. Records held only in memory are lost (B8) unless the configuration asks to
     * drain on shutdown, in which case they are spilled to disk first, within {@link #DRAIN_TIMEOUT}.
     */
    @Override
    public void close() {
        if (config.drainOnShutdown() && config.diskDir() != null) {
            try {
                var report = drain(DRAIN_TIMEOUT).toCompletableFuture().get(DRAIN_TIMEOUT.toSeconds() + 10,
                        TimeUnit.SECONDS);
                org.slf4j.LoggerFactory.getLogger(SeleneCache.class).info(
                        "drained at shutdown: {} records written, {} skipped{}", report.written(), report.skipped(),
                        report.timedOut() ? " (timed out)" : "");
            } catch (Exception e) {
                org.slf4j.LoggerFactory.getLogger(SeleneCache.class).warn("drain at shutdown failed: {}",
                        e.getMessage());
            }
        }
        system.terminate();
        try {
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cache node did not stop within 30 s", e);
        } finally {
            if (ownsCopier) {
                copier.close();
            }
        }
    }
}
