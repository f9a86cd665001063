package dev.selene.node.admin;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import kamon.Kamon;
import kamon.prometheus.PrometheusReporter;
import kamon.util.Filter;

import java.util.Map;

/**
 * Kamon, started once per JVM without its agent, with a Prometheus reporter whose text the admin server serves
 * on its own {@code /metrics} route (Kamon's embedded HTTP server stays off). Kamon takes a snapshot every
 * {@link #TICK_SECONDS} second(s), so a scrape is at most that much behind.
 */
public final class PrometheusMetrics {

    /** Kamon's snapshot interval. */
    public static final int TICK_SECONDS = 1;

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
                "kamon.prometheus.start-embedded-http-server", false)).withFallback(ConfigFactory.load());
        Kamon.initWithoutAttaching(config);
        PrometheusReporter r = new PrometheusReporter("kamon.prometheus", config);
        Kamon.addReporter("selene-prometheus", r, Filter.fromGlob("host_cache_*"));
        reporter = r;
    }

    /** The Prometheus text exposition of every {@code host_cache_*} metric, as of Kamon's last snapshot. */
    public static String scrape() {
        start();
        return reporter.scrapeData();
    }
}
