package dev.selene.node.replay;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** The outcome of one trace replay: hits, restores by tier, recomputes, publications and the ceilings. */
public final class ReplayReport {

    String layout;
    long warmBytes;
    double speedup;
    int rowInterval;
    long requests;
    long tokensRequested;
    long tokensFromCache;
    long blocksReferenced;
    long blocksRestored;
    long requestsHit;
    long requestsRecomputed;
    long restoresFromMemory;
    long restoresFromDisk;
    long restoresFromPool;
    long restoresRefused;
    long restoresFailed;
    long published;
    long stored;
    long present;
    long abandoned;
    long otherPublishResults;
    long lookups;
    double seconds;
    double maxLagSeconds;
    TraceCeiling ceiling;

    /** Tokens served from cache over tokens requested. */
    public double hitRatio() {
        return tokensRequested == 0 ? 0 : (double) tokensFromCache / tokensRequested;
    }

    /** Block references served from cache over block references. */
    public double blockHitRatio() {
        return blocksReferenced == 0 ? 0 : (double) blocksRestored / blocksReferenced;
    }

    public TraceCeiling ceiling() {
        return ceiling;
    }

    public long requests() {
        return requests;
    }

    public long restoresFromMemory() {
        return restoresFromMemory;
    }

    public long requestsRecomputed() {
        return requestsRecomputed;
    }

    public long stored() {
        return stored;
    }

    /** The report as a table for people. */
    public String table() {
        StringBuilder b = new StringBuilder();
        line(b, "layout / warm", layout + " / " + String.format(Locale.ROOT, "%.1f GiB", warmBytes / (double) (1L << 30)));
        line(b, "speed-up", speedup <= 0 ? "as fast as possible" : String.format(Locale.ROOT, "%.0fx", speedup));
        line(b, "rows published", rowInterval == 0 ? "at each request's last block"
                : "at the last block and every " + rowInterval + " blocks");
        line(b, "requests", requests + " in " + String.format(Locale.ROOT, "%.1f s", seconds));
        line(b, "tokens requested", Long.toString(tokensRequested));
        line(b, "tokens from cache", tokensFromCache + " (" + pct(hitRatio()) + " hit ratio)");
        line(b, "blocks from cache", blocksRestored + " of " + blocksReferenced + " (" + pct(blockHitRatio()) + ")");
        line(b, "requests hit / recomputed", requestsHit + " / " + requestsRecomputed);
        line(b, "restores by tier", "memory " + restoresFromMemory + ", disk " + restoresFromDisk + ", pool "
                + restoresFromPool + " (refused " + restoresRefused + ", failed " + restoresFailed + ")");
        line(b, "publications", published + " (stored " + stored + ", present " + present + ", abandoned "
                + abandoned + ", other " + otherPublishResults + ")");
        line(b, "ceiling, unbounded cache", pct(ceiling.tokenCeiling()) + " of tokens, " + pct(ceiling.blockCeiling())
                + " of block references");
        line(b, "ceiling, unbounded, rows", pct(ceiling.rowCeiling()) + " of tokens (Selene's match rule)");
        if (speedup > 0) {
            line(b, "max lag behind schedule", String.format(Locale.ROOT, "%.2f s", maxLagSeconds));
        }
        return b.toString();
    }

    /** The report as one flat JSON-ready map. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("layout", layout);
        m.put("warm_bytes", warmBytes);
        m.put("speedup", speedup);
        m.put("row_interval", rowInterval);
        m.put("requests", requests);
        m.put("seconds", round(seconds));
        m.put("tokens_requested", tokensRequested);
        m.put("tokens_from_cache", tokensFromCache);
        m.put("hit_ratio", round(hitRatio()));
        m.put("block_hit_ratio", round(blockHitRatio()));
        m.put("blocks_referenced", blocksReferenced);
        m.put("blocks_restored", blocksRestored);
        m.put("requests_hit", requestsHit);
        m.put("requests_recomputed", requestsRecomputed);
        m.put("restores_memory", restoresFromMemory);
        m.put("restores_disk", restoresFromDisk);
        m.put("restores_pool", restoresFromPool);
        m.put("restores_refused", restoresRefused);
        m.put("restores_failed", restoresFailed);
        m.put("published", published);
        m.put("stored", stored);
        m.put("present", present);
        m.put("abandoned", abandoned);
        m.put("lookups", lookups);
        m.put("ceiling_unbounded", round(ceiling.tokenCeiling()));
        m.put("ceiling_unbounded_blocks", round(ceiling.blockCeiling()));
        m.put("ceiling_unbounded_rows", round(ceiling.rowCeiling()));
        m.put("distinct_blocks", ceiling.distinctBlocks());
        m.put("max_lag_seconds", round(maxLagSeconds));
        return m;
    }

    private static double round(double v) {
        return Math.round(v * 10_000) / 10_000.0;
    }

    private static String pct(double v) {
        return String.format(Locale.ROOT, "%.1f%%", 100 * v);
    }

    private static void line(StringBuilder b, String name, String value) {
        b.append(String.format(Locale.ROOT, "%-28s %s%n", name, value));
    }
}
