package dev.selene.metrics.kamon;

import dev.selene.actors.metrics.MetricsBackend;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

class KamonMetricsBackendTest {

    @Test
    void onTheClassPath_itIsTheBackendTheCoreInstalls() {
        assertInstanceOf(KamonMetricsBackend.class, MetricsBackend.installed());
    }
}
