package dev.selene.node.admin;

import dev.selene.actors.api.CacheStatus;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class StatusHistoryTest {

    private static CacheStatus status(int free, Map<String, Long> counters) {
        return new CacheStatus(true, 100, 10, free, 0, 0, 0, counters, null, "test");
    }

    @Test
    void keepsTheLastSamples_andTurnsCounterGrowthIntoEvents() {
        StatusHistory h = new StatusHistory(3);
        h.add(status(90, Map.of("abandoned.no_space", 2L, "publish.stored", 5L)), 1_000);
        h.add(status(80, Map.of("abandoned.no_space", 2L, "publish.stored", 9L)), 2_000);
        h.add(status(70, Map.of("abandoned.no_space", 5L, "expired.memory", 4L)), 3_000);
        h.add(status(60, Map.of("abandoned.no_space", 5L, "expired.memory", 4L)), 4_000);
        assertEquals(List.of(2_000L, 3_000L, 4_000L), h.samples().stream().map(StatusHistory.Sample::epochMillis).toList());
        assertEquals(40, h.samples().getLast().usedSlots());
        // Growth since the first sample only; publications are not events.
        assertEquals(List.of(new StatusHistory.Event(3_000, "abandoned.no_space", 3),
                        new StatusHistory.Event(3_000, "expired.memory", 4)),
                h.events().stream().sorted(java.util.Comparator.comparing(StatusHistory.Event::counter)).toList());
        assertEquals(4_000, h.latestEpochMillis());
    }
}
