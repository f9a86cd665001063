package dev.selene.node.burst;

import dev.selene.actors.cache.HostCache;
import dev.selene.actors.metrics.CacheCounters;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The figures of one burst run, printed as a table for people and as one JSON object for machines.
 */
public final class BurstReport {

    /** What one probe of every conversation found. */
    public static final class Probe {
        long full;
        long partial;
        long recomputed;
        long verifiedRecords;
        long mismatchedRecords;
        long bytes;
        long fromDisk;
        long fromPool;
        double seconds;
        long poolBusyNanos;

        public long full() {
            return full;
        }

        boolean verified() {
            return mismatchedRecords == 0;
        }

        double gbps() {
            return seconds > 0 ? bytes / seconds / 1e9 : 0;
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("full", full);
            m.put("partial", partial);
            m.put("recomputed", recomputed);
            m.put("verified", verified());
            m.put("records_from_disk", fromDisk);
            m.put("records_from_pool", fromPool);
            return m;
        }
    }

    long published;
    long stored;
    long present;
    long oversize;
    long failed;
    long disabled;
    final Map<String, Long> abandoned = new TreeMap<>();
    Probe probe = new Probe();
    Probe afterRestart;
    double restartSeconds;
    long bytesPublished;
    double burstSeconds;
    double publishGbps;
    /** The raw copy of the same snapshots, over its two halves before and after the burst. */
    double rawCopyGbps;
    /** Each raw copy half's GB/s, in order (before the burst, after it). */
    double[] rawCopyPassGbps = new double[0];
    /** Each raw copy half's bytes per CPU-second of its copying threads, in the same order. */
    double[] rawCopyPassCpuGbps = new double[0];
    /** Each record's snapshot copied with one large device copy (after the passes, into the same slots). */
    double rawWholeCopyGbps;
    /** The raw copy's bytes per CPU-second of its threads. */
    double rawCopyCpuGbps;
    /** CPU time of the simulated device's device-to-host copy threads during the burst (0 on a real GPU). */
    long copyThreadCpuNanos;
    /** CPU time of this whole process during the burst. */
    long burstCpuNanos;
    long publishP50Nanos;
    long publishP99Nanos;
    double copyEngineBusySeconds;
    double burstCpuCores;
    long diskWriteBytes;
    double diskWriteGbps;
    double rawDiskWriteGbps;
    double diskReadGbps;
    double rawDiskReadGbps;
    /** Readers of the raw O_DIRECT read baseline: as many as the node's blocking dispatcher runs at once. */
    int rawDiskReadThreads;
    /** Why the raw O_DIRECT baseline has no figures (it could not run, or failed), or null. */
    String rawDiskError;
    /** Writes that found the disk full (ENOSPC); the disk store stopped taking writes until it had room. */
    long diskFull;
    /** Publications sent again after a {@code Retry} answer, over all publications. */
    long retries;
    long maxWriteDepth;
    /** Writes in flight on average while at least one was: write time summed over every write, over busy time. */
    double meanWriteDepth;
    /** Record reads in flight on average while at least one was: their times summed, over the read busy time. */
    double meanReadDepth;
    long spilled;
    int poolManagers;
    /** How the pool's planes ran: "plain text (loopback)" or "tls (jdk)" / "tls (openssl)". */
    String poolSecurity = "plain text (loopback)";
    /** Whether the node had a disk or pool tier: only a node without one evicts records for good. */
    boolean durableTier;
    /** Records dropped from memory because their durable write failed (the disk failed, or the pool refused them). */
    long droppedUnwritable;
    long poolRetired;
    long poolWriteBytes;
    long poolReadBytes;
    long poolWriteBusyNanos;
    long poolReadBusyNanos;
    long poolDrainSkipped;
    double retireSeconds;
    double rawPoolWriteGbps;
    double rawPoolReadGbps;
    /**
     * CPU of both ends while the pool moved records (the retire phase and the probe): the node's threads on the host
     * (not the burst's own), plus every manager process.
     */
    long poolCpuNanos;
    /** CPU of both ends (the host's node and data-plane threads, every manager process) while the raw baseline ran. */
    long rawPoolCpuNanos;
    /** CPU of the data planes' threads at both ends over the same windows as {@link #poolCpuNanos}. */
    long poolDataCpuNanos;
    /** The same over the raw baseline's rounds. */
    long rawPoolDataCpuNanos;
    /** Bytes the raw baseline moved: written and read together. */
    long rawPoolBytes;
    String device = "";
    String layout = "";
    long warmBytes;
    int totalSlots;
    int intakeSlots;

    /** Publications that ended with an answer or as abandoned; equal to {@code published} when nothing is lost. */
    public long accountedFor() {
        return stored + present + oversize + failed + disabled + abandonedTotal();
    }

    public long abandonedTotal() {
        return abandoned.values().stream().mapToLong(l -> l).sum();
    }

    /** Whether every restored byte matched, in every probe. */
    public boolean verified() {
        return probe.verified() && (afterRestart == null || afterRestart.verified());
    }

    /** Whether every publication is accounted for and every restored byte matched. */
    public boolean complete() {
        return accountedFor() == published && verified();
    }

    /** Whether the disk filled up during the run and publications were abandoned while it did. */
    public boolean lostToFullDisk() {
        return diskFull > 0 && abandonedTotal() > 0;
    }

    /** Times a write found the disk full. */
    public long diskFull() {
        return diskFull;
    }

    public long restoredFull() {
        return probe.full;
    }

    /** The disk tier's figures from the node's counters (zero without a disk tier). */
    void diskCounters(CacheCounters c) {
        droppedUnwritable = c.get("spill.dropped");
        diskWriteBytes = c.get("disk.write.bytes");
        long busy = c.get("disk.write.busy_nanos");
        diskWriteGbps = busy > 0 ? diskWriteBytes / (double) busy : 0;
        long readBytes = c.get("disk.read.record_bytes");
        long readBusy = c.get("disk.read.busy_nanos");
        diskReadGbps = readBusy > 0 ? readBytes / (double) readBusy : 0;
        meanReadDepth = readBusy > 0 ? c.get("disk.read.record_nanos") / (double) readBusy : 0;
        maxWriteDepth = c.get("disk.write.max_in_flight");
        meanWriteDepth = busy > 0 ? c.get("disk.write.nanos") / (double) busy : 0;
        diskFull = c.get("disk.full");
        spilled = c.get("spill.written");
    }

    /** The pool's figures from the node's counters: records retired, bytes written and read. */
    void poolCounters(CacheCounters c, int managers) {
        poolManagers = managers;
        poolRetired = c.get("pool.retired");
        poolWriteBytes = c.get("pool.write.bytes");
        poolReadBytes = c.get("pool.read.bytes");
        poolWriteBusyNanos = c.get("pool.write.busy_nanos");
        poolReadBusyNanos = c.get("pool.read.busy_nanos");
    }

    /**
     * Bytes retired to the pool over the time the host had a retirement on the data plane (as the disk tier's write
     * rate is taken over the time it had a write in flight), in GB/s.
     */
    double poolWriteGbps() {
        return poolWriteBusyNanos > 0 ? poolWriteBytes / (double) poolWriteBusyNanos : 0;
    }

    /** Bytes fetched from the pool over the time the host had a fetch on the data plane, in GB/s. */
    double poolReadGbps() {
        return poolReadBusyNanos > 0 ? poolReadBytes / (double) poolReadBusyNanos : 0;
    }

    /** Bytes retired to the pool over the whole retire phase (the burst and the drain after it), in GB/s. */
    double poolRetirePhaseGbps() {
        return retireSeconds > 0 ? poolWriteBytes / retireSeconds / 1e9 : 0;
    }

    /** Bytes read from the pool over the time a probe restore reading from it was in flight, in GB/s. */
    double poolRestorePhaseGbps() {
        return probe.poolBusyNanos > 0 ? poolReadBytes / (double) probe.poolBusyNanos : 0;
    }

    /** CPU-seconds of both ends per GB of records the pool moved (written and read). */
    double poolCpuSecondsPerGb() {
        long bytes = poolWriteBytes + poolReadBytes;
        return bytes > 0 ? poolCpuNanos / (double) bytes : 0;
    }

    /** CPU-seconds of both ends per GB the raw baseline moved. */
    /** Data-plane threads' CPU-seconds, both ends, per GB of records the pool moved. */
    double poolDataCpuSecondsPerGb() {
        long bytes = poolWriteBytes + poolReadBytes;
        return bytes > 0 ? poolDataCpuNanos / (double) bytes : 0;
    }

    double rawPoolDataCpuSecondsPerGb() {
        return rawPoolBytes > 0 ? rawPoolDataCpuNanos / (double) rawPoolBytes : 0;
    }

    double rawPoolCpuSecondsPerGb() {
        return rawPoolBytes > 0 ? rawPoolCpuNanos / (double) rawPoolBytes : 0;
    }

    private static double ratio(double ours, double raw) {
        return raw > 0 ? ours / raw : 0;
    }

    /** The report as an ordered map, the shape of the {@code --json} line. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("published", published);
        m.put("stored", stored);
        m.put("present", present);
        m.put("oversize", oversize);
        m.put("failed", failed);
        m.put("abandoned", new LinkedHashMap<>(abandoned));
        m.put("accounted", accountedFor() == published);
        m.put("retries_per_publication", published > 0 ? round(retries / (double) published) : 0.0);
        m.put("restored_full", probe.full);
        m.put("dropped_unwritable", droppedUnwritable);
        m.put("restored_partial", probe.partial);
        m.put("recomputed", probe.recomputed);
        m.put("restored_from_disk_records", probe.fromDisk);
        m.put("restored_from_pool", probe.fromPool);
        m.put("verified", verified());
        m.put("verified_records", probe.verifiedRecords + (afterRestart == null ? 0 : afterRestart.verifiedRecords));
        if (afterRestart != null) {
            m.put("restored_after_restart", afterRestart.toMap());
            m.put("restart_seconds", round(restartSeconds));
        }
        m.put("bytes_published", bytesPublished);
        m.put("burst_seconds", round(burstSeconds));
        m.put("publish_gbps", round(publishGbps));
        m.put("raw_copy_gbps", round(rawCopyGbps));
        m.put("raw_copy_pass_gbps", Arrays.stream(rawCopyPassGbps).map(BurstReport::round).boxed().toList());
        m.put("raw_copy_pass_cpu_gbps", Arrays.stream(rawCopyPassCpuGbps).map(BurstReport::round).boxed().toList());
        m.put("raw_whole_copy_gbps", round(rawWholeCopyGbps));
        m.put("publish_vs_whole_copy", round(ratio(publishGbps, rawWholeCopyGbps)));
        m.put("publish_vs_raw_copy", round(rawCopyGbps > 0 ? publishGbps / rawCopyGbps : 0));
        m.put("publish_wall_ratio", round(rawCopyGbps > 0 ? publishGbps / rawCopyGbps : 0));
        m.put("publish_cpu_gbps", round(publishCpuGbps()));
        m.put("raw_copy_cpu_gbps", round(rawCopyCpuGbps));
        m.put("publish_cpu_ratio", round(ratio(publishCpuGbps(), rawCopyCpuGbps)));
        m.put("copy_engine_busy_seconds", round(copyEngineBusySeconds));
        m.put("burst_cpu_cores", round(burstCpuCores));
        m.put("cpu_us_per_publication_beside_copy", round(cpuMicrosPerPublicationBesideCopy()));
        m.put("publish_p50_ms", round(publishP50Nanos / 1e6));
        m.put("publish_p99_ms", round(publishP99Nanos / 1e6));
        m.put("bytes_restored", probe.bytes);
        m.put("restore_gbps", round(probe.gbps()));
        m.put("spilled_records", spilled);
        m.put("disk_write_bytes", diskWriteBytes);
        m.put("disk_write_gbps", round(diskWriteGbps));
        m.put("raw_disk_write_gbps", round(rawDiskWriteGbps));
        m.put("disk_read_gbps", round(diskReadGbps));
        m.put("raw_disk_read_gbps", round(rawDiskReadGbps));
        if (rawDiskReadGbps > 0) {
            m.put("raw_disk_read_threads", rawDiskReadThreads);
        }
        m.put("mean_read_depth", round(meanReadDepth));
        if (rawDiskError != null) {
            m.put("raw_disk_error", rawDiskError);
        }
        m.put("disk_full", diskFull);
        m.put("max_write_depth", maxWriteDepth);
        m.put("mean_write_depth", round(meanWriteDepth));
        m.put("write_depth_cap", HostCache.SPILL_IN_FLIGHT_CAP);
        if (diskWriteBytes > 0) {
            m.put("spill_wall_ratio", round(ratio(diskWriteGbps, rawDiskWriteGbps)));
            m.put("restore_read_ratio", round(ratio(diskReadGbps, rawDiskReadGbps)));
        }
        if (poolManagers > 0) {
            m.put("pool_managers", poolManagers);
            m.put("pool_transport_security", poolSecurity);
            m.put("pool_retired_records", poolRetired);
            m.put("pool_drain_skipped", poolDrainSkipped);
            m.put("pool_write_bytes", poolWriteBytes);
            m.put("pool_retire_seconds", round(retireSeconds));
            m.put("pool_write_busy_seconds", round(poolWriteBusyNanos / 1e9));
            m.put("pool_retire_phase_gbps", round(poolRetirePhaseGbps()));
            m.put("pool_write_gbps", round(poolWriteGbps()));
            m.put("raw_write_gbps", round(rawPoolWriteGbps));
            m.put("pool_write_ratio", round(ratio(poolWriteGbps(), rawPoolWriteGbps)));
            m.put("pool_read_bytes", poolReadBytes);
            m.put("pool_read_busy_seconds", round(poolReadBusyNanos / 1e9));
            m.put("pool_restore_seconds", round(probe.poolBusyNanos / 1e9));
            m.put("pool_restore_phase_gbps", round(poolRestorePhaseGbps()));
            m.put("pool_read_gbps", round(poolReadGbps()));
            m.put("raw_read_gbps", round(rawPoolReadGbps));
            m.put("pool_read_ratio", round(ratio(poolReadGbps(), rawPoolReadGbps)));
            m.put("pool_cpu_s_per_gb", round(poolCpuSecondsPerGb()));
            m.put("raw_cpu_s_per_gb", round(rawPoolCpuSecondsPerGb()));
            m.put("pool_cpu_ratio", round(ratio(poolCpuSecondsPerGb(), rawPoolCpuSecondsPerGb())));
            m.put("pool_data_cpu_s_per_gb", round(poolDataCpuSecondsPerGb()));
            m.put("raw_data_cpu_s_per_gb", round(rawPoolDataCpuSecondsPerGb()));
            m.put("pool_data_cpu_ratio", round(ratio(poolDataCpuSecondsPerGb(), rawPoolDataCpuSecondsPerGb())));
        }
        m.put("device", device);
        m.put("layout", layout);
        m.put("warm_bytes", warmBytes);
        m.put("total_slots", totalSlots);
        m.put("intake_slots", intakeSlots);
        return m;
    }

    /**
     * One line that says what held and what did not: publications kept, conversations restored in full, bytes
     * verified, and the disk filling up when it did.
     */
    public String verdict() {
        long conversations = probe.full + probe.partial + probe.recomputed;
        StringBuilder b = new StringBuilder("verdict: ");
        boolean held = abandoned.isEmpty() && accountedFor() == published && verified()
                && probe.full == conversations && diskFull == 0 && droppedUnwritable == 0;
        b.append(held ? "OK: " : "NOT MET: ");
        if (accountedFor() != published) {
            b.append(published - accountedFor()).append(" publications unaccounted for; ");
        }
        b.append(abandoned.isEmpty() ? "every publication kept" : abandonedTotal() + " of " + published
                + " publications abandoned " + abandoned);
        b.append(", ").append(probe.full).append('/').append(conversations).append(" conversations restored in full");
        if (probe.full < conversations && !durableTier && warmBytes > 0
                && bytesPublished > warmBytes) {
            // Memory-only and smaller than the burst: the coldest records were evicted, as the node is meant to.
            b.append(String.format(Locale.ROOT, " (memory only: the warm tier holds %.1f GiB of the %.1f GiB "
                    + "published, the coldest records were evicted)", warmBytes / (double) (1L << 30),
                    bytesPublished / (double) (1L << 30)));
        }
        if (afterRestart != null) {
            b.append(" (").append(afterRestart.full).append(" after the restart)");
        }
        b.append(verified() ? ", every restored byte verified" : ", RESTORED BYTES DIFFER");
        if (diskFull > 0) {
            b.append(", the disk filled up ").append(diskFull).append(" times");
        }
        if (droppedUnwritable > 0) {
            b.append(", ").append(droppedUnwritable).append(" records dropped from memory because their durable "
                    + "write failed (the disk failed, or the pool refused them)");
        }
        return b.toString();
    }

    /**
     * The process's CPU time during the burst minus the copy threads', per publication, in microseconds: what the
     * actor protocol, the publishing driver, the garbage collector and the compiler cost together beside the
     * copy (an upper bound on the protocol's own cost); 0 without the simulated device's copy threads.
     */
    double cpuMicrosPerPublicationBesideCopy() {
        return copyThreadCpuNanos > 0 && published > 0
                ? Math.max(0, burstCpuNanos - copyThreadCpuNanos) / 1e3 / published : 0;
    }

    /** Bytes published per CPU-second of the device-to-host copy threads (0 when they are not this JVM's). */
    double publishCpuGbps() {
        return copyThreadCpuNanos > 0 ? bytesPublished / (double) copyThreadCpuNanos : 0;
    }

    /** The figures of a run that are ratios against their raw paths (and retries), by their JSON names. */
    public static final List<String> RATIO_FIELDS = List.of("publish_wall_ratio", "publish_cpu_ratio",
            "spill_wall_ratio", "restore_read_ratio", "pool_write_ratio", "pool_read_ratio",
            "retries_per_publication");

    /** This run's ratio figures (those it has: disk and pool ones only with those tiers). */
    public Map<String, Double> ratios() {
        Map<String, Object> all = toMap();
        Map<String, Double> out = new LinkedHashMap<>();
        for (String k : RATIO_FIELDS) {
            if (all.get(k) instanceof Number n) {
                out.put(k, n.doubleValue());
            }
        }
        return out;
    }

    /** The median of each ratio figure over {@code reports} (the mean of the middle two for an even count). */
    public static Map<String, Double> medians(List<BurstReport> reports) {
        List<Map<String, Double>> each = reports.stream().map(BurstReport::ratios).toList();
        Map<String, Double> out = new LinkedHashMap<>();
        for (String k : RATIO_FIELDS) {
            double[] v = each.stream().filter(m -> m.containsKey(k))
                    .mapToDouble(m -> m.get(k)).sorted().toArray();
            if (v.length > 0) {
                double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
                out.put(k, round(median));
            }
        }
        return out;
    }

    /** {@code name value} pairs of ratio figures, for one line. */
    public static String ratioLine(Map<String, Double> ratios) {
        StringBuilder b = new StringBuilder();
        ratios.forEach((k, v) -> b.append(b.isEmpty() ? "" : ", ").append(k).append(' ')
                .append(String.format(Locale.ROOT, "%.3f", v)));
        return b.toString();
    }

    /** The human table. */
    public String table() {
        StringBuilder b = new StringBuilder();
        row(b, "layout / device", layout + " / " + device);
        row(b, "slots (intake)", totalSlots + " (" + intakeSlots + ")");
        row(b, "published", Long.toString(published));
        row(b, "stored", Long.toString(stored));
        row(b, "present / oversize / failed", present + " / " + oversize + " / " + failed);
        row(b, "abandoned", abandoned.isEmpty() ? "0" : abandonedTotal() + " " + abandoned);
        row(b, "every publication accounted for", accountedFor() == published ? "yes" : "NO");
        row(b, "retries per publication", String.format(Locale.ROOT, "%.2f", published > 0
                ? retries / (double) published : 0.0));
        row(b, "restored full / partial", probe.full + " / " + probe.partial
                + (probe.fromDisk > 0 ? "  (" + probe.fromDisk + " records from disk)" : "")
                + (probe.fromPool > 0 ? "  (" + probe.fromPool + " records from the pool)" : ""));
        row(b, "recomputed", Long.toString(probe.recomputed));
        row(b, "verified (byte-identical)", verified() ? "yes (" + (probe.verifiedRecords
                + (afterRestart == null ? 0 : afterRestart.verifiedRecords)) + " records)"
                : "NO (" + (probe.mismatchedRecords + (afterRestart == null ? 0 : afterRestart.mismatchedRecords))
                + " records differ)");
        if (afterRestart != null) {
            row(b, "after restart: full / partial / recomputed", afterRestart.full + " / " + afterRestart.partial
                    + " / " + afterRestart.recomputed + String.format(Locale.ROOT, "  (restart %.1f s)",
                    restartSeconds));
        }
        row(b, "bytes published", String.format(Locale.ROOT, "%,d (%.2f GiB)", bytesPublished,
                bytesPublished / (double) (1L << 30)));
        row(b, "publish GB/s", String.format(Locale.ROOT, "%.2f in %.2f s", publishGbps, burstSeconds));
        row(b, "raw copy GB/s, same snapshots", String.format(Locale.ROOT, "%.2f (publish at %.2fx; passes %s)",
                rawCopyGbps, rawCopyGbps > 0 ? publishGbps / rawCopyGbps : 0, Arrays.toString(
                        Arrays.stream(rawCopyPassGbps).map(BurstReport::round).toArray())));
        if (copyThreadCpuNanos > 0) {
            row(b, "per copy-thread CPU-second GB/s", String.format(Locale.ROOT, "%.2f (raw %.2f, publish at %.2fx)",
                    publishCpuGbps(), rawCopyCpuGbps, ratio(publishCpuGbps(), rawCopyCpuGbps)));
        }
        if (copyEngineBusySeconds > 0) {
            row(b, "copy engine busy / GB/s while busy", String.format(Locale.ROOT, "%.2f s / %.2f",
                    copyEngineBusySeconds, bytesPublished / copyEngineBusySeconds / 1e9));
        }
        if (copyThreadCpuNanos > 0) {
            row(b, "CPU per publication beside the copy", String.format(Locale.ROOT, "%.0f µs",
                    cpuMicrosPerPublicationBesideCopy()));
        }
        row(b, "CPU cores busy during the burst", String.format(Locale.ROOT, "%.2f of %d", burstCpuCores,
                Runtime.getRuntime().availableProcessors()));
        row(b, "publish latency p50 / p99", String.format(Locale.ROOT, "%.2f / %.2f ms", publishP50Nanos / 1e6,
                publishP99Nanos / 1e6));
        row(b, "restore GB/s (probe)", String.format(Locale.ROOT, "%.2f in %.2f s", probe.gbps(), probe.seconds));
        if (diskWriteBytes > 0) {
            row(b, "spilled records / bytes", String.format(Locale.ROOT, "%d / %.2f GiB", spilled,
                    diskWriteBytes / (double) (1L << 30)));
            row(b, "disk write GB/s (raw O_DIRECT)", String.format(Locale.ROOT, "%.2f (%.2f, spill at %.2fx)",
                    diskWriteGbps, rawDiskWriteGbps, rawDiskWriteGbps > 0 ? diskWriteGbps / rawDiskWriteGbps : 0));
            row(b, "disk read GB/s (raw O_DIRECT)", String.format(Locale.ROOT, "%.2f (%.2f, restore at %.2fx)",
                    diskReadGbps, rawDiskReadGbps, rawDiskReadGbps > 0 ? diskReadGbps / rawDiskReadGbps : 0));
            row(b, "writes in flight (mean / max / cap)", String.format(Locale.ROOT, "%.1f / %d / %d",
                    meanWriteDepth, maxWriteDepth, HostCache.SPILL_IN_FLIGHT_CAP));
            row(b, "reads in flight (mean; raw readers)", String.format(Locale.ROOT, "%.1f; %d", meanReadDepth,
                    rawDiskReadThreads));
            if (rawDiskError != null) {
                row(b, "raw O_DIRECT baseline", rawDiskError);
            }
        }
        if (diskFull > 0) {
            row(b, "disk full (ENOSPC)", diskFull + " writes found it full; the disk store took no writes until it "
                    + "had made room");
        }
        if (poolManagers > 0) {
            row(b, "pool planes (cluster, data)", poolSecurity.startsWith("tls") ? "mutual " + poolSecurity
                    : poolSecurity + ": no TLS (the preset's managers run on this host; --pool-tls runs TLS)");
            row(b, "pool managers / records retired", poolManagers + " / " + poolRetired
                    + (poolDrainSkipped > 0 ? "  (" + poolDrainSkipped + " not retired by the drain)" : ""));
            row(b, "pool write GB/s (raw data plane)", String.format(Locale.ROOT,
                    "%.2f (%.2f, retire at %.2fx)  %.2f GiB in %.2f s busy; %.2f GB/s over the %.2f s retire phase",
                    poolWriteGbps(), rawPoolWriteGbps, ratio(poolWriteGbps(), rawPoolWriteGbps),
                    poolWriteBytes / (double) (1L << 30), poolWriteBusyNanos / 1e9, poolRetirePhaseGbps(),
                    retireSeconds));
            row(b, "pool read GB/s (raw data plane)", String.format(Locale.ROOT,
                    "%.2f (%.2f, fetch at %.2fx)  %.2f GiB in %.2f s busy; %.2f GB/s over %.2f s of restores",
                    poolReadGbps(), rawPoolReadGbps, ratio(poolReadGbps(), rawPoolReadGbps),
                    poolReadBytes / (double) (1L << 30), poolReadBusyNanos / 1e9, poolRestorePhaseGbps(),
                    probe.poolBusyNanos / 1e9));
            row(b, "pool CPU-s per GB, both ends (raw)", String.format(Locale.ROOT, "%.2f (%.2f, %.2fx)",
                    poolCpuSecondsPerGb(), rawPoolCpuSecondsPerGb(),
                    ratio(poolCpuSecondsPerGb(), rawPoolCpuSecondsPerGb())));
            row(b, "  of which data-plane threads (raw)", String.format(Locale.ROOT, "%.2f (%.2f, %.2fx)",
                    poolDataCpuSecondsPerGb(), rawPoolDataCpuSecondsPerGb(),
                    ratio(poolDataCpuSecondsPerGb(), rawPoolDataCpuSecondsPerGb())));
        }
        return b.toString();
    }

    private static void row(StringBuilder b, String name, String value) {
        b.append(String.format(Locale.ROOT, "  %-42s %s%n", name, value));
    }

    private static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }
}
