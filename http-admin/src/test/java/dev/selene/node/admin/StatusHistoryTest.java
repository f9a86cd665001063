package dev.selene.node.admin;

import dev.selene.actors.value.CacheStatus;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StatusHistoryTest {

    private static CacheStatus status(int free, Map<String, Long> counters) {
        return new CacheStatus(true, 100, 10, free, 0, 0, 0, counters, null, null, "test");
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

    @Test
    void groupsTheEventsOfTheWindow_onePerCounter_largestFirst() {
        StatusHistory h = new StatusHistory(3);
        h.add(status(90, Map.of("abandoned.no_space", 1L)), 1_000);
        h.add(status(90, Map.of("abandoned.no_space", 3L, "admin.evicted", 1L)), 2_000);
        h.add(status(90, Map.of("abandoned.no_space", 4L, "admin.evicted", 1L, "expired.disk", 1L)), 3_000);
        h.add(status(90, Map.of("abandoned.no_space", 7L, "admin.evicted", 1L, "expired.disk", 1L)), 4_000);
        assertEquals(List.of(
                        new StatusHistory.EventGroup("abandoned.no_space", "abandoned", "no_space", 6, 3, 2_000, 4_000),
                        new StatusHistory.EventGroup("admin.evicted", "evicted", "operator", 1, 1, 2_000, 2_000),
                        new StatusHistory.EventGroup("expired.disk", "expired", "disk", 1, 1, 3_000, 3_000)),
                h.eventGroups());
        h.add(status(90, Map.of("abandoned.no_space", 7L, "admin.evicted", 1L, "expired.disk", 1L)), 5_000);
        h.add(status(90, Map.of("abandoned.no_space", 7L, "admin.evicted", 1L, "expired.disk", 1L)), 6_000);
        // The samples of 2 000 and 3 000 left the window, and their events with them.
        assertEquals(List.of(new StatusHistory.EventGroup("abandoned.no_space", "abandoned", "no_space", 3, 1, 4_000,
                4_000)), h.eventGroups());
        assertEquals(1, h.events().size());
    }

    @Test
    void evictionsToMakeRoom_areEventsOfTheWindow_besideTheRatesChart() {
        // issue 26: the panel said "none" while 2,054 evictions were counted and charted
        StatusHistory h = new StatusHistory(5);
        h.add(status(90, Map.of("evicted.memory", 0L)), 1_000);
        h.add(status(90, Map.of("evicted.memory", 380L)), 2_000);
        h.add(status(90, Map.of("evicted.memory", 760L, "admin.evicted", 1L)), 3_000);
        assertEquals(List.of(
                        new StatusHistory.EventGroup("evicted.memory", "evicted", "memory", 760, 2, 2_000, 3_000),
                        new StatusHistory.EventGroup("admin.evicted", "evicted", "operator", 1, 1, 3_000, 3_000)),
                h.eventGroups());
        assertEquals(381.0, h.samples().getLast().rates().get("evictions"), "the chart's rate counts the same");
    }

    @Test
    void eachSampleCarriesTheRatesPerSecondSinceTheOneBefore() {
        StatusHistory h = new StatusHistory(10);
        h.add(status(90, Map.of("publish.stored", 10L, "publish.bytes", 999L, "lookup.total", 4L)), 1_000);
        h.add(status(90, Map.of("publish.stored", 14L, "publish.retry", 2L, "publish.bytes", 5_000L,
                "lookup.total", 5L, "restore.records.memory", 3L, "expired.memory", 1L)), 3_000);
        h.add(status(90, Map.of("publish.stored", 15L, "publish.retry", 2L, "lookup.total", 5L)), 3_000);
        List<StatusHistory.Sample> s = h.samples();
        assertTrue(s.getFirst().rates().isEmpty(), "nothing to compare the first sample with");
        assertEquals(Map.of("publications", 3.0, "lookups", 0.5, "restoredRecords", 1.5, "evictions", 0.0,
                "abandonsAndExpiries", 0.5), s.get(1).rates(), "bytes are not publications");
        assertEquals(s.get(1).rates(), s.get(2).rates(), "a sample in the same millisecond keeps the rates");
        assertEquals(null, s.get(1).diskRecords(), "no disk tier");
    }
}
