package dev.selene.node.burst;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The figures of one burst run, printed as a table for people and as one JSON object for machines.
 */
public final class BurstReport {

    long published;
    long stored;
    long present;
    long oversize;
    long failed;
    long disabled;
    final Map<String, Long> abandoned = new TreeMap<>();
    long restoredFull;
    long restoredPartial;
    long recomputed;
    boolean verified = true;
    long verifiedRecords;
    long mismatchedRecords;
    long bytesPublished;
    double burstSeconds;
    double publishGbps;
    double rawCopyGbps;
    long publishP50Nanos;
    long publishP99Nanos;
    double probeSeconds;
    double copyEngineBusySeconds;
    double burstCpuCores;
    long bytesRestored;
    double restoreGbps;
    String device = "";
    String layout = "";
    long warmBytes;
    int totalSlots;
    int intakeSlots;

    /** Publications that ended with an answer or as abandoned; equal to {@code published} when nothing is lost. */
    public long accountedFor() {
        return stored + present + oversize + failed + disabled + abandoned.values().stream().mapToLong(l -> l).sum();
    }

    /** Whether every publication is accounted for and every restored byte matched. */
    public boolean complete() {
        return accountedFor() == published && verified;
    }

    public long abandonedTotal() {
        return abandoned.values().stream().mapToLong(l -> l).sum();
    }

    public boolean verified() {
        return verified;
    }

    public long restoredFull() {
        return restoredFull;
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
        m.put("restored_full", restoredFull);
        m.put("restored_partial", restoredPartial);
        m.put("recomputed", recomputed);
        m.put("verified", verified);
        m.put("verified_records", verifiedRecords);
        m.put("bytes_published", bytesPublished);
        m.put("burst_seconds", round(burstSeconds));
        m.put("publish_gbps", round(publishGbps));
        m.put("raw_copy_gbps", round(rawCopyGbps));
        m.put("publish_vs_raw_copy", round(rawCopyGbps > 0 ? publishGbps / rawCopyGbps : 0));
        m.put("copy_engine_busy_seconds", round(copyEngineBusySeconds));
        m.put("burst_cpu_cores", round(burstCpuCores));
        m.put("publish_p50_ms", round(publishP50Nanos / 1e6));
        m.put("publish_p99_ms", round(publishP99Nanos / 1e6));
        m.put("bytes_restored", bytesRestored);
        m.put("restore_gbps", round(restoreGbps));
        m.put("device", device);
        m.put("layout", layout);
        m.put("warm_bytes", warmBytes);
        m.put("total_slots", totalSlots);
        m.put("intake_slots", intakeSlots);
        return m;
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
        row(b, "restored full / partial", restoredFull + " / " + restoredPartial);
        row(b, "recomputed", Long.toString(recomputed));
        row(b, "verified (byte-identical)", verified ? "yes (" + verifiedRecords + " records)"
                : "NO (" + mismatchedRecords + " records differ)");
        row(b, "bytes published", String.format(Locale.ROOT, "%,d (%.2f GiB)", bytesPublished,
                bytesPublished / (double) (1L << 30)));
        row(b, "publish GB/s (memory tier)", String.format(Locale.ROOT, "%.2f in %.2f s", publishGbps, burstSeconds));
        row(b, "raw copy GB/s, same bytes", String.format(Locale.ROOT, "%.2f (publish at %.2fx)", rawCopyGbps,
                rawCopyGbps > 0 ? publishGbps / rawCopyGbps : 0));
        if (copyEngineBusySeconds > 0) {
            row(b, "copy engine busy / GB/s while busy", String.format(Locale.ROOT, "%.2f s / %.2f",
                    copyEngineBusySeconds, bytesPublished / copyEngineBusySeconds / 1e9));
        }
        row(b, "CPU cores busy during the burst", String.format(Locale.ROOT, "%.2f of %d", burstCpuCores,
                Runtime.getRuntime().availableProcessors()));
        row(b, "publish latency p50 / p99", String.format(Locale.ROOT, "%.2f / %.2f ms", publishP50Nanos / 1e6,
                publishP99Nanos / 1e6));
        row(b, "restore GB/s (memory tier)", String.format(Locale.ROOT, "%.2f in %.2f s", restoreGbps, probeSeconds));
        return b.toString();
    }

    private static void row(StringBuilder b, String name, String value) {
        b.append(String.format(Locale.ROOT, "  %-34s %s%n", name, value));
    }

    private static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }
}
