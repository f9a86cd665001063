package dev.selene.node.replay;

import dev.selene.engine.config.ByteSize;
import dev.selene.engine.cost.PrefillCost;
import dev.selene.engine.simulator.ReplaySimulator;
import dev.selene.engine.simulator.SimulationResult;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceCeiling;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The outcome of one trace replay: hits by tier, the time they saved, restores, publications, and the references
 * a hit ratio is judged by (the farthest-next-use oracle at the same size, the unbounded ceilings).
 */
public final class ReplayReport {

    /** Where the replay ran: through a node's actors, or through the simulator of its cores. */
    enum Engine {
        NODE("node"),
        SIMULATOR("simulator");

        final String label;

        Engine(String label) {
            this.label = label;
        }
    }

    Engine engine;
    String policy;
    RowRule rows;
    String layout;
    long warmBytes;
    long diskBytes;
    /**
     * The size the node's disk tier ran at in the end (-1 without a node's disk): less than {@link #diskBytes} when
     * the disk could not hold that at start or filled up during the run.
     */
    long diskRanBytes = -1;
    /** Writes of the node's that found the disk full. */
    long diskFull;
    double speedup;
    PrefillCost cost;
    long requests;
    long tokensRequested;
    long tokensFromCache;
    long tokensFromMemory;
    long tokensFromDisk;
    long bytesFromMemory;
    long bytesFromDisk;
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
    long evicted = -1;
    long rowsAdded;
    long rowsDropped;
    long rowsHeldBack;
    long spilled = -1;
    long evictedFromDisk = -1;
    long lookups;
    double seconds;
    double maxLagSeconds;
    TraceCeiling ceiling;
    SimulationResult oracle;
    SimulationResult memoryOnlyOracle;
    SimulationResult simulated;

    /** Tokens served from cache over tokens requested. */
    public double hitRatio() {
        return ratio(tokensFromCache, tokensRequested);
    }

    /** Tokens served from memory over tokens requested. */
    public double memoryHitRatio() {
        return ratio(tokensFromMemory, tokensRequested);
    }

    /** Tokens served from disk over tokens requested. */
    public double diskHitRatio() {
        return ratio(tokensFromDisk, tokensRequested);
    }

    /** Block references served from cache over block references. */
    public double blockHitRatio() {
        return ratio(blocksRestored, blocksReferenced);
    }

    /** Prefill seconds the hits saved: recomputing their tokens minus copying their bytes. */
    public double secondsSaved() {
        return cost.savedSeconds(tokensFromCache, bytesFromMemory, bytesFromDisk);
    }

    /** Prefill seconds of every prompt with nothing cached. */
    public double secondsRecompute() {
        return cost.recomputeSeconds(tokensRequested);
    }

    /** The hit ratio over the oracle's at the same size (NaN without an oracle run). */
    public double ofOracle() {
        return oracle == null || oracle.hitRatio() == 0 ? Double.NaN : hitRatio() / oracle.hitRatio();
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

    /** Fills the counts of a simulated replay. */
    void fill(SimulationResult r) {
        requests = r.requests();
        tokensRequested = r.tokensRequested();
        tokensFromCache = r.tokensFromCache();
        tokensFromMemory = r.tokensFromCache() - r.tokensFromDisk();
        tokensFromDisk = r.tokensFromDisk();
        bytesFromMemory = r.bytesRestored() - r.bytesFromDisk();
        bytesFromDisk = r.bytesFromDisk();
        blocksReferenced = r.blocksReferenced();
        blocksRestored = r.blocksRestored();
        requestsHit = r.requestsHit();
        requestsRecomputed = r.requests() - r.requestsHit();
        restoresFromMemory = r.restoresFromMemory();
        restoresFromDisk = r.restoresFromDisk();
        restoresRefused = r.restoresRefused();
        lookups = r.requests();
        published = r.published();
        stored = r.stored();
        present = r.present();
        abandoned = r.abandoned();
        evicted = r.evicted();
        rowsAdded = r.rowsAdded();
        rowsDropped = r.rowsDropped();
        rowsHeldBack = r.rowsHeldBack();
        if (diskBytes > 0 && !ReplaySimulator.ORACLE.equals(r.policy())) {
            spilled = r.spilled();
            evictedFromDisk = r.evictedFromDisk();
        }
    }

    /** The report as a table for people. */
    public String table() {
        StringBuilder b = new StringBuilder();
        line(b, "layout / warm / disk", layout + " / " + gib(warmBytes) + " / " + (diskBytes == 0 ? "none" : gib(diskBytes)));
        if (diskShrank()) {
            line(b, "disk tier, as it ran", ByteSize.format(diskRanBytes) + " of the " + ByteSize.format(diskBytes)
                    + " asked for (the disk held less" + (diskFull > 0 ? "; it filled up " + diskFull + " times" : "")
                    + "): the simulator and the oracle below model that size");
        }
        line(b, "run", engine.label + ", policy " + policy + (engine == Engine.NODE ? ", speed-up "
                + (speedup <= 0 ? "as fast as possible" : String.format(Locale.ROOT, "%.0fx", speedup)) : ""));
        line(b, "rows published", rows.describe() + " (--rows " + rows.label() + ")");
        line(b, "requests", requests + " in " + String.format(Locale.ROOT, "%.1f s", seconds));
        line(b, "tokens requested", Long.toString(tokensRequested));
        line(b, "tokens from cache", tokensFromCache + " (" + pct(hitRatio()) + " hit ratio: memory "
                + pct(memoryHitRatio()) + ", disk " + pct(diskHitRatio()) + ")");
        line(b, "prefill time saved", String.format(Locale.ROOT, "%.0f s of %.0f s (%s; %.0f tokens/s prefill)",
                secondsSaved(), secondsRecompute(), secondsRecompute() > 0 ? pct(secondsSaved() / secondsRecompute())
                        : "nothing to recompute",
                cost.prefillTokensPerSecond()));
        line(b, "blocks from cache", blocksRestored + " of " + blocksReferenced + " (" + pct(blockHitRatio()) + ")");
        line(b, "requests hit / recomputed", requestsHit + " / " + requestsRecomputed);
        line(b, "restores by tier", "memory " + restoresFromMemory + ", disk " + restoresFromDisk + ", pool "
                + restoresFromPool + " (refused " + restoresRefused + ", failed " + restoresFailed + ")");
        line(b, "publications", published + " (stored " + stored + ", present " + present + ", abandoned "
                + abandoned + ", other " + otherPublishResults + ")");
        if (rowsAdded > 0 || rowsDropped > 0) {
            line(b, "rows apart from pages", rowsAdded + " joined records held without one, " + rowsDropped
                    + " dropped while their pages stayed");
        }
        if (rowsHeldBack > 0) {
            line(b, "rows held back", rowsHeldBack + " decided to keep for their conversation's next turn");
        }
        if (spilled >= 0) {
            line(b, "disk", spilled + " records written, " + evictedFromDisk + " files deleted for room");
        }
        if (oracle != null && !Double.isNaN(ofOracle())) {
            line(b, diskBytes > 0 ? "oracle, same memory + disk" : "oracle, same memory", pct(oracle.hitRatio())
                    + " (farthest next use; this run reaches " + String.format(Locale.ROOT, "%.2f", ofOracle())
                    + " of it)");
        }
        if (memoryOnlyOracle != null) {
            line(b, "oracle, same memory only", pct(memoryOnlyOracle.hitRatio()));
        }
        if (simulated != null) {
            line(b, "simulator, same policy", pct(simulated.hitRatio()));
        }
        line(b, "ceiling, unbounded, rows", pct(ceiling.rowCeiling()) + " of tokens (the match rule with these rows)");
        line(b, "ceiling, unbounded cache", pct(ceiling.tokenCeiling()) + " of tokens, " + pct(ceiling.blockCeiling())
                + " of block references");
        if (speedup > 0 && engine == Engine.NODE) {
            line(b, "max lag behind schedule", String.format(Locale.ROOT, "%.2f s", maxLagSeconds));
        }
        return b.toString();
    }

    /** Whether the node's disk tier ran smaller than asked for. */
    boolean diskShrank() {
        return diskRanBytes >= 0 && diskRanBytes < diskBytes;
    }

    /**
     * One closing line: the hit ratio, against the oracle's when there is one, and whether every publication was
     * kept, every restore succeeded and the disk tier ran at its size ({@code OK}) or not ({@code NOT MET}).
     */

    public String verdict() {
        boolean kept = abandoned == 0 && restoresFailed == 0;
        StringBuilder b = new StringBuilder("verdict: ").append(kept && !diskShrank() ? "OK: " : "NOT MET: ");
        b.append(pct(hitRatio())).append(" of tokens from cache");
        if (oracle != null && !Double.isNaN(ofOracle())) {
            b.append(String.format(Locale.ROOT, ", %.2f of the farthest-next-use oracle's", ofOracle()));
        }
        b.append(kept ? ", no publication abandoned, no restore failed"
                : ", " + abandoned + " publications abandoned, " + restoresFailed + " restores failed");
        if (diskShrank()) {
            b.append(", the disk tier ran at ").append(ByteSize.format(diskRanBytes)).append(" of the ")
                    .append(ByteSize.format(diskBytes)).append(" asked for");
        }
        return b.toString();
    }

    /** The report as one flat JSON-ready map; the policy and the row rule come next to the hit ratio. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("engine", engine.label);
        m.put("layout", layout);
        m.put("warm_bytes", warmBytes);
        m.put("disk_bytes", diskBytes);
        if (diskRanBytes >= 0) {
            m.put("disk_run_bytes", diskRanBytes);
            m.put("disk_full", diskFull);
        }
        m.put("speedup", speedup);
        m.put("row_interval", rows.interval());
        m.put("requests", requests);
        m.put("seconds", round(seconds));
        m.put("tokens_requested", tokensRequested);
        m.put("tokens_from_cache", tokensFromCache);
        m.put("policy", policy);
        m.put("rows", rows.placement().label());
        m.put("hit_ratio", round(hitRatio()));
        m.put("hit_ratio_memory", round(memoryHitRatio()));
        m.put("hit_ratio_disk", round(diskHitRatio()));
        m.put("oracle_hit_ratio", oracle == null ? null : round(oracle.hitRatio()));
        m.put("of_oracle", Double.isNaN(ofOracle()) ? null : round(ofOracle()));
        m.put("oracle_memory_only_hit_ratio", memoryOnlyOracle == null ? null : round(memoryOnlyOracle.hitRatio()));
        m.put("simulated_hit_ratio", simulated == null ? null : round(simulated.hitRatio()));
        m.put("simulated_hit_ratio_disk", simulated == null ? null : round(simulated.diskHitRatio()));
        m.put("tokens_from_memory", tokensFromMemory);
        m.put("tokens_from_disk", tokensFromDisk);
        m.put("prefill_tokens_per_s", cost.prefillTokensPerSecond());
        m.put("seconds_saved", round(secondsSaved()));
        m.put("seconds_recompute", round(secondsRecompute()));
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
        m.put("evicted", evicted < 0 ? null : evicted);
        m.put("rows_added", rowsAdded);
        m.put("rows_dropped", rowsDropped);
        m.put("simulated_rows_added", simulated == null ? null : simulated.rowsAdded());
        m.put("simulated_rows_dropped", simulated == null ? null : simulated.rowsDropped());
        m.put("rows_held_back", rowsHeldBack);
        m.put("simulated_rows_held_back", simulated == null ? null : simulated.rowsHeldBack());
        m.put("spilled", spilled < 0 ? null : spilled);
        m.put("evicted_disk", evictedFromDisk < 0 ? null : evictedFromDisk);
        m.put("lookups", lookups);
        m.put("ceiling_unbounded", round(ceiling.tokenCeiling()));
        m.put("ceiling_unbounded_blocks", round(ceiling.blockCeiling()));
        m.put("ceiling_unbounded_rows", round(ceiling.rowCeiling()));
        m.put("distinct_blocks", ceiling.distinctBlocks());
        m.put("max_lag_seconds", round(maxLagSeconds));
        return m;
    }

    private static double ratio(long a, long b) {
        return b == 0 ? 0 : (double) a / b;
    }

    private static double round(double v) {
        return Double.isNaN(v) ? v : Math.round(v * 10_000) / 10_000.0;
    }

    private static String pct(double v) {
        return String.format(Locale.ROOT, "%.1f%%", 100 * v);
    }

    private static String gib(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }

    private static void line(StringBuilder b, String name, String value) {
        b.append(String.format(Locale.ROOT, "%-28s %s%n", name, value));
    }
}
