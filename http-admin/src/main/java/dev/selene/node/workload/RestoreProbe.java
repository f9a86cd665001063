package dev.selene.node.workload;

import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.api.SeleneCache;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Restores every conversation into fresh device memory and checks every byte against the keyed content it was
 * published with (byte-identical restores). The device memory of the restores in flight is allocated before the
 * first restore starts, so that the timed restores do not share the machine with the page faults of memory just
 * mapped.
 */
public final class RestoreProbe {

    private RestoreProbe() {
    }

    /**
     * What one conversation's probe found: the depth restored, records verified and mismatched, bytes restored,
     * records from disk and from the pool, and when its restore started and was answered (verification not included).
     */
    private record Probed(int depth, long verified, long mismatched, long bytes, int fromDisk, int fromPool,
                          long startNanos, long endNanos, RestoreResult.Outcome outcome, String detail) {
    }

    /**
     * Probes every conversation of {@code conversations} on {@code cache}, as many at once as the settings'
     * concurrency, each checked as soon as its restore has answered, with a progress line named {@code phase} on
     * {@code progressOut} when the settings ask for one.
     */
    public static ProbeTally run(SeleneCache cache, DeviceCopier copier, Conversations conversations,
                                 PrintStream progressOut, String phase) throws InterruptedException {
        return run(cache, copier, conversations, progressOut, phase, false);
    }

    /**
     * Probes as above; when {@code checkBetweenWaves}, the restores run in waves as large as the concurrency and each
     * wave's bytes are checked once all its restores have answered, before the next wave starts, so that no restore
     * shares the machine with the checks (which a serving engine does not make). Every byte is checked either way.
     */
    public static ProbeTally run(SeleneCache cache, DeviceCopier copier, Conversations conversations,
                                 PrintStream progressOut, String phase, boolean checkBetweenWaves)
            throws InterruptedException {
        WorkloadSettings settings = conversations.settings();
        Layout layout = settings.layout();
        List<Conversation> list = conversations.list();
        AtomicLong probed = new AtomicLong();
        Progress progress = new Progress(settings.progress() ? progressOut : null, phase,
                () -> probed.get() + "/" + list.size() + " conversations");
        List<Probed> results = new ArrayList<>(list.size());
        // One set of restore targets per restore in flight, taken and given back: the probe's device memory is what
        // the concurrency restores at once, not the whole run again beside its snapshots.
        int sets = Math.min(settings.concurrency(), list.size());
        List<long[]> bases = new ArrayList<>(sets);
        BlockingQueue<long[]> freeTargets = new ArrayBlockingQueue<>(sets);
        long start = 0;
        try (ExecutorService pool = Executors.newFixedThreadPool(settings.concurrency())) {
            for (int s = 0; s < sets; s++) {
                long[] b = new long[settings.recordsPerConversation()];
                bases.add(b);
                for (int i = 0; i < b.length; i++) {
                    b[i] = copier.allocateDevice(DevicePlacement.bytesNeeded(layout, settings.hasRow(i)));
                }
                freeTargets.add(b);
            }
            start = System.nanoTime();
            if (checkBetweenWaves) {
                for (int from = 0; from < list.size(); from += sets) {
                    List<Future<Restored>> wave = new ArrayList<>();
                    for (Conversation conv : list.subList(from, Math.min(list.size(), from + sets))) {
                        wave.add(pool.submit(() -> restoreOne(cache, layout, conv, freeTargets)));
                    }
                    List<Future<Probed>> checked = new ArrayList<>();
                    for (Restored r : all(wave)) {
                        checked.add(pool.submit(() -> checkAndGiveBack(copier, layout, r, freeTargets, probed)));
                    }
                    results.addAll(all(checked));
                }
            } else {
                List<Future<Probed>> running = new ArrayList<>();
                for (Conversation conv : list) {
                    running.add(pool.submit(() -> checkAndGiveBack(copier, layout,
                            restoreOne(cache, layout, conv, freeTargets), freeTargets, probed)));
                }
                results.addAll(all(running));
            }
        } finally {
            progress.stop();
            for (long[] b : bases) {
                for (long base : b) {
                    if (base != 0) {
                        copier.freeDevice(base);
                    }
                }
            }
        }
        return tally(results, list.getFirst().chain.length, (System.nanoTime() - start) / 1e9);
    }

    /** What a conversation's restore answered, into the device memory at {@code bases}, not checked yet. */
    private record Restored(Conversation conv, long[] bases, List<DevicePlacement> targets, RestoreResult result,
                            long startNanos, long endNanos) {
    }

    /** The results of {@code futures}, in order; a probe whose task failed fails. */
    private static <T> List<T> all(List<Future<T>> futures) throws InterruptedException {
        List<T> out = new ArrayList<>(futures.size());
        for (Future<T> f : futures) {
            try {
                out.add(f.get());
            } catch (ExecutionException e) {
                throw new IllegalStateException("probe failed: " + e.getCause(), e.getCause());
            }
        }
        return out;
    }

    /** The probe's figures over every conversation's result; a conversation is full at {@code fullDepth}. */
    private static ProbeTally tally(List<Probed> results, int fullDepth, double seconds) {
        List<Probed> fromPool = new ArrayList<>();
        long full = 0;
        long partial = 0;
        long recomputed = 0;
        long verified = 0;
        long mismatched = 0;
        long bytes = 0;
        long fromDisk = 0;
        long fromPoolRecords = 0;
        Map<String, Long> notRestored = new TreeMap<>();
        String firstDetail = "";
        for (Probed r : results) {
            if (r.depth() == fullDepth) {
                full++;
            } else if (r.depth() > 0) {
                partial++;
            } else {
                recomputed++;
                notRestored.merge(r.outcome().name().toLowerCase(Locale.ROOT), 1L, Long::sum);
                if (firstDetail.isEmpty() && !r.detail().isEmpty()) {
                    firstDetail = r.detail();
                }
            }
            verified += r.verified();
            mismatched += r.mismatched();
            bytes += r.bytes();
            fromDisk += r.fromDisk();
            fromPoolRecords += r.fromPool();
            if (r.fromPool() > 0) {
                fromPool.add(r);
            }
        }
        return new ProbeTally(full, partial, recomputed, verified, mismatched, bytes, fromDisk, fromPoolRecords,
                seconds, busyNanos(fromPool), notRestored, firstDetail);
    }

    /**
     * Restores {@code conv} into a set of device memory taken from {@code free} (one allocation per record); the set
     * goes back to {@code free} if the restore throws, and with the result otherwise.
     */
    private static Restored restoreOne(SeleneCache cache, Layout layout, Conversation conv, BlockingQueue<long[]> free)
            throws InterruptedException {
        long[] bases = free.take();
        try {
            List<DevicePlacement> targets = new ArrayList<>(conv.specs.length);
            for (int i = 0; i < conv.specs.length; i++) {
                targets.add(DevicePlacement.contiguous(layout, bases[i], conv.specs[i].hasRow()));
            }
            long start = System.nanoTime();
            RestoreResult r = cache.restore(Conversations.NAMESPACE, conv.chain, targets, Duration.ofHours(1))
                    .toCompletableFuture().join();
            return new Restored(conv, bases, targets, r, start, System.nanoTime());
        } catch (RuntimeException | Error e) {
            free.add(bases);
            throw e;
        }
    }

    /** Checks {@code restored} and counts it as probed, then gives its device memory back to {@code free}. */
    private static Probed checkAndGiveBack(DeviceCopier copier, Layout layout, Restored restored,
                                           BlockingQueue<long[]> free, AtomicLong probed) {
        try {
            Probed p = checkOne(copier, layout, restored);
            probed.incrementAndGet();
            return p;
        } finally {
            free.add(restored.bases());
        }
    }

    /** Checks every byte {@code restored} brought back against the keyed content it was published with. */
    private static Probed checkOne(DeviceCopier copier, Layout layout, Restored restored) {
        RestoreResult r = restored.result();
        Conversation conv = restored.conv();
        if (r.outcome() != RestoreResult.Outcome.RESTORED) {
            return new Probed(0, 0, 0, 0, 0, 0, restored.startNanos(), restored.endNanos(), r.outcome(), r.detail());
        }
        long ok = 0;
        long bad = 0;
        for (int i = 0; i < r.records(); i++) {
            // A record above the conversation's end may come back without its row (dropped to make room; only the
            // row where the restore ends is needed): its pages are verified.
            boolean row = conv.specs[i].hasRow() && !r.rowsLeftOut().contains(i);
            if (KeyedContent.verifyRecord(copier, layout, restored.targets().get(i), conv.specs[i].key(), row)) {
                ok++;
            } else {
                bad++;
            }
        }
        return new Probed(r.records(), ok, bad, r.bytes(), r.fromDisk(), r.fromPool(), restored.startNanos(),
                restored.endNanos(), r.outcome(), r.detail());
    }

    /** The time during which at least one of {@code restores} was in flight. */
    private static long busyNanos(List<Probed> restores) {
        List<Probed> sorted = new ArrayList<>(restores);
        sorted.sort(Comparator.comparingLong(Probed::startNanos));
        long total = 0;
        long from = 0;
        long to = Long.MIN_VALUE;
        for (Probed r : sorted) {
            if (r.startNanos() > to) {
                total += to == Long.MIN_VALUE ? 0 : to - from;
                from = r.startNanos();
                to = r.endNanos();
            } else {
                to = Math.max(to, r.endNanos());
            }
        }
        return total + (to == Long.MIN_VALUE ? 0 : to - from);
    }
}
