package dev.selene.node.admin;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import kamon.Kamon;
import kamon.prometheus.PrometheusReporter;
import kamon.util.Filter;

import java.util.List;
import java.util.Map;

/**
 * Kamon, started once per JVM without its agent, with a Prometheus reporter whose text the admin server serves
 * on its own {@code /metrics} route (Kamon's embedded HTTP server stays off), followed by the process's own metrics
 * ({@link ProcessMetrics}). The cache records its metrics itself ({@code CacheMetrics}); this only starts the
 * reporter. Kamon takes a snapshot every {@link #TICK_SECONDS} second(s), so a scrape is at most that much behind.
 */
public final class PrometheusMetrics {

    /** Kamon's snapshot interval. */
    public static final int TICK_SECONDS = 1;

    /** The metrics exported: Selene's own. */
    public static final String EXPORTED = "selene_*";

    /**
     * Histogram buckets of the latencies, in seconds: a publication's copy or a record read takes from tens of
     * microseconds to tens of milliseconds, a disk write up to seconds under load.
     */
    static final List<Double> TIME_BUCKETS_SECONDS = List.of(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
            0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0);

    private static PrometheusReporter reporter;

    private PrometheusMetrics() {
    }

    /** Starts Kamon and the reporter unless this JVM already did. */
    public static synchronized void start() {
        if (reporter != null) {
            return;
        }
        Config config = ConfigFactory.parseMap(Map.of(
                "kamon.init.hide-banner", true,
                "kamon.environment.service", "selene",
                "kamon.metric.tick-interval", TICK_SECONDS + " second",
                "kamon.metric.optimistic-tick-alignment", false,
                "kamon.modules.prometheus-reporter.enabled", false,
                "kamon.prometheus.start-embedded-http-server", false,
                "kamon.prometheus.buckets.time-buckets", TIME_BUCKETS_SECONDS)).withFallback(ConfigFactory.load());
        Kamon.initWithoutAttaching(config);
        PrometheusReporter r = new PrometheusReporter("kamon.prometheus", config);
        Kamon.addReporter("selene-prometheus", r, Filter.fromGlob(EXPORTED));
        reporter = r;
    }

    /**
     * The Prometheus text exposition of every {@code selene_*} metric with a series, as of Kamon's last snapshot,
     * and of the process's metrics now.
     */
    public static String scrape() {
        start();
        return withoutEmptyFamilies(reporter.scrapeData()) + ProcessMetrics.scrape();
    }

    /**
     * {@code text} without the HELP and TYPE lines of families that have no sample: Kamon declares every metric
     * of its registry, a histogram before its first sample and the metrics of tiers this node lacks included.
     */
    static String withoutEmptyFamilies(String text) {
        StringBuilder out = new StringBuilder(text.length());
        StringBuilder header = new StringBuilder();
        for (String line : text.lines().toList()) {
            if (line.startsWith("# HELP ")) {
                header.setLength(0);
                header.append(line).append('\n');
            } else if (line.startsWith("#")) {
                header.append(line).append('\n');
            } else if (!line.isBlank()) {
                out.append(header).append(line).append('\n');
                header.setLength(0);
            }
        }
        return out.toString();
    }
}
