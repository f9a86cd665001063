package dev.selene.node.burst;

import dev.selene.actors.cache.HostCache;

import java.util.Arrays;
import java.util.Locale;

/** The burst report as a table for people: one figure a row, each raw baseline beside the figure it measures. */
final class BurstTable {

    private BurstTable() {
    }

    /** The rows of {@code r}. */
    static String of(BurstReport r) {
        StringBuilder b = new StringBuilder();
        row(b, "layout / device", r.layout + " / " + r.device);
        row(b, "slots (intake)", r.totalSlots + " (" + r.intakeSlots + ")");
        row(b, "published", Long.toString(r.publish.published()));
        row(b, "stored", Long.toString(r.publish.stored()));
        row(b, "present / oversize / failed", r.publish.present() + " / " + r.publish.oversize() + " / "
                + r.publish.failed());
        row(b, "abandoned", r.publish.abandoned().isEmpty() ? "0" : r.abandonedTotal() + " " + r.publish.abandoned());
        row(b, "every publication accounted for", r.accountedFor() == r.publish.published() ? "yes" : "NO");
        row(b, "retries per publication", String.format(Locale.ROOT, "%.2f", r.publish.published() > 0
                ? r.publish.retries() / (double) r.publish.published() : 0.0));
        row(b, "restored full / partial", r.probe.full() + " / " + r.probe.partial()
                + (r.probe.fromDisk() > 0 ? "  (" + r.probe.fromDisk() + " records from disk)" : "")
                + (r.probe.fromPool() > 0 ? "  (" + r.probe.fromPool() + " records from the pool)" : ""));
        row(b, "recomputed", r.probe.recomputed() + (r.probe.notRestored().isEmpty() ? "" : "  ("
                + r.probe.notRestoredWords() + (r.probe.firstDetail().isEmpty() ? "" : "; the first: "
                + r.probe.firstDetail()) + ")"));
        row(b, "verified (byte-identical)", r.verified() ? "yes (" + (r.probe.verifiedRecords()
                + (r.afterRestart == null ? 0 : r.afterRestart.verifiedRecords())) + " records)"
                : "NO (" + (r.probe.mismatchedRecords()
                + (r.afterRestart == null ? 0 : r.afterRestart.mismatchedRecords()))
                + " records differ)");
        if (r.afterRestart != null) {
            row(b, "after restart: full / partial / recomputed", r.afterRestart.full() + " / "
                    + r.afterRestart.partial()
                    + " / " + r.afterRestart.recomputed() + String.format(Locale.ROOT, "  (restart %.1f s)",
                    r.restartSeconds));
        }
        row(b, "bytes published", String.format(Locale.ROOT, "%,d (%.2f GiB)", r.publish.bytesPublished(),
                r.publish.bytesPublished() / (double) (1L << 30)));
        row(b, "publish GB/s", String.format(Locale.ROOT, "%.2f in %.2f s", r.publish.gbps(), r.publish.seconds()));
        row(b, "raw copy GB/s, same snapshots", String.format(Locale.ROOT, "%.2f (publish at %.2fx; passes %s)",
                r.rawCopyGbps, r.rawCopyGbps > 0 ? r.publish.gbps() / r.rawCopyGbps : 0, Arrays.toString(
                        Arrays.stream(r.rawCopyPassGbps).map(BurstReport::round).toArray())));
        if (r.copyThreadCpuNanos > 0) {
            row(b, "per copy-thread CPU-second GB/s", String.format(Locale.ROOT, "%.2f (raw %.2f, publish at %.2fx)",
                    r.publishCpuGbps(), r.rawCopyCpuGbps, BurstReport.ratio(r.publishCpuGbps(), r.rawCopyCpuGbps)));
        }
        if (r.copyEngineBusySeconds > 0) {
            row(b, "copy engine busy / GB/s while busy", String.format(Locale.ROOT, "%.2f s / %.2f",
                    r.copyEngineBusySeconds, r.publish.bytesPublished() / r.copyEngineBusySeconds / 1e9));
        }
        if (r.copyThreadCpuNanos > 0) {
            row(b, "CPU per publication beside the copy", String.format(Locale.ROOT, "%.0f µs",
                    r.cpuMicrosPerPublicationBesideCopy()));
        }
        row(b, "CPU cores busy during the burst", String.format(Locale.ROOT, "%.2f of %d", r.burstCpuCores,
                Runtime.getRuntime().availableProcessors()));
        row(b, "publish latency p50 / p99", String.format(Locale.ROOT, "%.2f / %.2f ms", r.publish.p50Nanos() / 1e6,
                r.publish.p99Nanos() / 1e6));
        row(b, "restore GB/s (probe)", String.format(Locale.ROOT, "%.2f in %.2f s", r.probe.gbps(), r.probe.seconds()));
        if (r.diskWriteBytes > 0) {
            row(b, "spilled records / bytes", String.format(Locale.ROOT, "%d / %.2f GiB", r.spilled,
                    r.diskWriteBytes / (double) (1L << 30)));
            row(b, "disk write GB/s (raw O_DIRECT)", String.format(Locale.ROOT, "%.2f (%.2f, spill at %.2fx)",
                    r.diskWriteGbps, r.rawDiskWriteGbps,
                    r.rawDiskWriteGbps > 0 ? r.diskWriteGbps / r.rawDiskWriteGbps : 0));
            row(b, "disk read GB/s (raw O_DIRECT)", String.format(Locale.ROOT, "%.2f (%.2f, restore at %.2fx)",
                    r.diskReadGbps, r.rawDiskReadGbps, r.rawDiskReadGbps > 0 ? r.diskReadGbps / r.rawDiskReadGbps : 0));
            row(b, "writes in flight (mean / max / cap)", String.format(Locale.ROOT, "%.1f / %d / %d",
                    r.meanWriteDepth, r.maxWriteDepth, HostCache.SPILL_IN_FLIGHT_CAP));
            row(b, "reads in flight (mean; raw readers)", String.format(Locale.ROOT, "%.1f; %d", r.meanReadDepth,
                    r.rawDiskReadThreads));
            if (r.rawDiskError != null) {
                row(b, "raw O_DIRECT baseline", r.rawDiskError);
            }
        }
        if (r.diskFull > 0) {
            row(b, "disk full (ENOSPC)", r.diskFull + " writes found it full; the disk store took no writes until it "
                    + "had made room");
        }
        if (r.poolManagers > 0) {
            row(b, "pool planes (cluster, data)", r.poolSecurity.startsWith("tls") ? "mutual " + r.poolSecurity
                    : r.poolSecurity + ": no TLS (the preset's managers run on this host; --pool-tls runs TLS)");
            row(b, "pool managers / records retired", r.poolManagers + " / " + r.poolRetired
                    + (r.poolDrainSkipped > 0 ? "  (" + r.poolDrainSkipped + " not retired by the drain)" : ""));
            row(b, "pool write GB/s (raw data plane)", String.format(Locale.ROOT,
                    "%.2f (%.2f, retire at %.2fx)  %.2f GiB in %.2f s busy; %.2f GB/s over the %.2f s retire phase",
                    r.poolWriteGbps(), r.rawPoolWriteGbps, BurstReport.ratio(r.poolWriteGbps(), r.rawPoolWriteGbps),
                    r.poolWriteBytes / (double) (1L << 30), r.poolWriteBusyNanos / 1e9, r.poolRetirePhaseGbps(),
                    r.retireSeconds));
            row(b, "pool read GB/s (raw data plane)", String.format(Locale.ROOT,
                    "%.2f (%.2f, fetch at %.2fx)  %.2f GiB in %.2f s busy; %.2f GB/s over %.2f s of restores",
                    r.poolReadGbps(), r.rawPoolReadGbps, BurstReport.ratio(r.poolReadGbps(), r.rawPoolReadGbps),
                    r.poolReadBytes / (double) (1L << 30), r.poolReadBusyNanos / 1e9, r.poolRestorePhaseGbps(),
                    r.probe.poolBusyNanos() / 1e9));
            row(b, "pool CPU-s per GB, both ends (raw)", String.format(Locale.ROOT, "%.2f (%.2f, %.2fx)",
                    r.poolCpuSecondsPerGb(), r.rawPoolCpuSecondsPerGb(),
                    BurstReport.ratio(r.poolCpuSecondsPerGb(), r.rawPoolCpuSecondsPerGb())));
            row(b, "  of which data-plane threads (raw)", String.format(Locale.ROOT, "%.2f (%.2f, %.2fx)",
                    r.poolDataCpuSecondsPerGb(), r.rawPoolDataCpuSecondsPerGb(),
                    BurstReport.ratio(r.poolDataCpuSecondsPerGb(), r.rawPoolDataCpuSecondsPerGb())));
            if (r.rawPoolError != null) {
                row(b, "raw data-plane baseline", r.rawPoolError);
            }
        }
        return b.toString();
    }


    private static void row(StringBuilder b, String name, String value) {
        b.append(String.format(Locale.ROOT, "  %-42s %s%n", name, value));
    }
}
