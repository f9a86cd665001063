package dev.selene.node.admin;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricCatalogTest {

    @Test
    void counters_mapToMetricsWithBoundedLabels() {
        assertEquals(new MetricCatalog.Mapped("host_cache_retry_abandoned",
                        "Publications the engine gave up while told to retry (B17), by reason",
                        Map.of("reason", "no_space")),
                MetricCatalog.map("abandoned.no_space").orElseThrow());
        assertEquals(Map.of("tier", "memory"), MetricCatalog.map("expired.memory").orElseThrow().tags());
        assertEquals(Map.of("tier", "memory", "direction", "publish"),
                MetricCatalog.map("publish.bytes").orElseThrow().tags(), "exact rules win over prefixes");
        assertEquals(Map.of("result", "retry_no_space"), MetricCatalog.map("publish.retry_no_space").orElseThrow().tags());
    }

    @Test
    void unboundedOrUnknownNames_areNotExported() {
        assertTrue(MetricCatalog.map("abandoned.Some Free Text!").isEmpty());
        assertTrue(MetricCatalog.map("abandoned." + "x".repeat(41)).isEmpty());
        assertTrue(MetricCatalog.map("something.new").isEmpty());
    }

    @Test
    void initialSeries_includeTheExpiryAndAbandonCounters() {
        assertTrue(MetricCatalog.initialCounters().contains("expired.memory"));
        assertTrue(MetricCatalog.initialCounters().contains("abandoned.no_space"));
        assertTrue(MetricCatalog.initialCounters().contains("lookup.total"));
    }
}
