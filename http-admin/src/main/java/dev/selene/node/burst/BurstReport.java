package dev.selene.node.burst;

import dev.selene.actors.cache.HostCache;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.node.workload.ProbeTally;
import dev.selene.node.workload.PublishTally;
import dev.selene.node.workload.RoundResult;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The figures of one burst run, printed as a table for people and as one JSON object for machines.
 */
public final class BurstReport {

    /** The publications of the burst. */
    PublishTally publish = PublishTally.NONE;
    ProbeTally probe = ProbeTally.NONE;
    /** The probe after the restart, or null without one. */
    ProbeTally afterRestart;
    double restartSeconds;
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
    /** Why the raw pool baseline's second round failed (a manager went away), or null. */
    String rawPoolError;
    /** Writes that found the disk full (ENOSPC); the disk store stopped taking writes until it had room. */
    long diskFull;
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
    /** Seconds the run waited for the compilers to go quiet before its measured windows (after a warm-up). */
    double settleSeconds;
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
        return publish.accountedFor();
    }

    /** Publications given up, whatever the reason. */
    public long abandonedTotal() {
        return publish.abandonedTotal();
    }

    /** Whether every restored byte matched, in every probe. */
    public boolean verified() {
        return result().verified();
    }

    /** Whether every publication is accounted for and every restored byte matched. */
    public boolean complete() {
        return result().complete();
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
        return probe.full();
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
        return probe.poolBusyNanos() > 0 ? poolReadBytes / (double) probe.poolBusyNanos() : 0;
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

    /** {@code ours} over {@code raw}; 0 without a raw figure. */
    static double ratio(double ours, double raw) {
        return raw > 0 ? ours / raw : 0;
    }

    /** The report as an ordered map, the shape of the {@code --json} line. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("published", publish.published());
        m.put("stored", publish.stored());
        m.put("present", publish.present());
        m.put("oversize", publish.oversize());
        m.put("failed", publish.failed());
        m.put("abandoned", new LinkedHashMap<>(publish.abandoned()));
        m.put("accounted", accountedFor() == publish.published());
        m.put("retries_per_publication", publish.published() > 0
                ? round(publish.retries() / (double) publish.published()) : 0.0);
        m.put("restored_full", probe.full());
        m.put("dropped_unwritable", droppedUnwritable);
        m.put("restored_partial", probe.partial());
        m.put("recomputed", probe.recomputed());
        m.put("not_restored", new java.util.TreeMap<>(probe.notRestored()));
        m.put("restored_from_disk_records", probe.fromDisk());
        m.put("restored_from_pool", probe.fromPool());
        m.put("verified", verified());
        m.put("verified_records", probe.verifiedRecords()
                + (afterRestart == null ? 0 : afterRestart.verifiedRecords()));
        if (afterRestart != null) {
            m.put("restored_after_restart", afterRestart.toMap());
            m.put("restart_seconds", round(restartSeconds));
        }
        m.put("bytes_published", publish.bytesPublished());
        m.put("burst_seconds", round(publish.seconds()));
        m.put("publish_gbps", round(publish.gbps()));
        m.put("raw_copy_gbps", round(rawCopyGbps));
        m.put("raw_copy_pass_gbps", Arrays.stream(rawCopyPassGbps).map(BurstReport::round).boxed().toList());
        m.put("raw_copy_pass_cpu_gbps", Arrays.stream(rawCopyPassCpuGbps).map(BurstReport::round).boxed().toList());
        m.put("raw_whole_copy_gbps", round(rawWholeCopyGbps));
        m.put("publish_vs_whole_copy", round(ratio(publish.gbps(), rawWholeCopyGbps)));
        m.put("publish_vs_raw_copy", round(rawCopyGbps > 0 ? publish.gbps() / rawCopyGbps : 0));
        m.put("publish_wall_ratio", round(rawCopyGbps > 0 ? publish.gbps() / rawCopyGbps : 0));
        m.put("publish_cpu_gbps", round(publishCpuGbps()));
        m.put("raw_copy_cpu_gbps", round(rawCopyCpuGbps));
        m.put("publish_cpu_ratio", round(ratio(publishCpuGbps(), rawCopyCpuGbps)));
        m.put("copy_engine_busy_seconds", round(copyEngineBusySeconds));
        m.put("burst_cpu_cores", round(burstCpuCores));
        m.put("cpu_us_per_publication_beside_copy", round(cpuMicrosPerPublicationBesideCopy()));
        m.put("publish_p50_ms", round(publish.p50Nanos() / 1e6));
        m.put("publish_p99_ms", round(publish.p99Nanos() / 1e6));
        m.put("bytes_restored", probe.bytes());
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
            m.put("pool_restore_seconds", round(probe.poolBusyNanos() / 1e9));
            m.put("pool_restore_phase_gbps", round(poolRestorePhaseGbps()));
            m.put("pool_read_gbps", round(poolReadGbps()));
            m.put("raw_read_gbps", round(rawPoolReadGbps));
            m.put("pool_read_ratio", round(ratio(poolReadGbps(), rawPoolReadGbps)));
            m.put("pool_cpu_s_per_gb", round(poolCpuSecondsPerGb()));
            m.put("raw_cpu_s_per_gb", round(rawPoolCpuSecondsPerGb()));
            if (rawPoolError != null) {
                m.put("raw_pool_error", rawPoolError);
            }
            m.put("pool_cpu_ratio", round(ratio(poolCpuSecondsPerGb(), rawPoolCpuSecondsPerGb())));
            m.put("pool_data_cpu_s_per_gb", round(poolDataCpuSecondsPerGb()));
            m.put("raw_data_cpu_s_per_gb", round(rawPoolDataCpuSecondsPerGb()));
            m.put("pool_data_cpu_ratio", round(ratio(poolDataCpuSecondsPerGb(), rawPoolDataCpuSecondsPerGb())));
        }
        m.put("settle_seconds", round(settleSeconds));
        m.put("device", device);
        m.put("layout", layout);
        m.put("warm_bytes", warmBytes);
        m.put("total_slots", totalSlots);
        m.put("intake_slots", intakeSlots);
        return m;
    }

    /** What the burst and its probes came to, as the workload reports a run. */
    public RoundResult result() {
        return new RoundResult(publish, probe, afterRestart, durableTier, warmBytes, diskFull, droppedUnwritable);
    }

    /**
     * One line that says what held and what did not: publications kept, conversations restored in full, bytes
     * verified, and the disk filling up when it did.
     */
    public String verdict() {
        return result().verdict();
    }

    /**
     * The process's CPU time during the burst minus the copy threads', per publication, in microseconds: what the
     * actor protocol, the publishing driver, the garbage collector and the compiler cost together beside the
     * copy (an upper bound on the protocol's own cost); 0 without the simulated device's copy threads.
     */
    double cpuMicrosPerPublicationBesideCopy() {
        return copyThreadCpuNanos > 0 && publish.published() > 0
                ? Math.max(0, burstCpuNanos - copyThreadCpuNanos) / 1e3 / publish.published() : 0;
    }

    /** Bytes published per CPU-second of the device-to-host copy threads (0 when they are not this JVM's). */
    double publishCpuGbps() {
        return copyThreadCpuNanos > 0 ? publish.bytesPublished() / (double) copyThreadCpuNanos : 0;
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
        return BurstTable.of(this);
    }

    /** {@code v} to three decimals, as the report's figures are given. */
    static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }
}
