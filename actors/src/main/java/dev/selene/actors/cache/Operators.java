package dev.selene.actors.cache;

import dev.selene.actors.value.Durations;
import dev.selene.actors.value.EvictOutcome;
import dev.selene.actors.value.ExpiryReport;
import dev.selene.actors.value.Tier;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.key.RecordKey;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;

/** The catalog's part for expiry (the max-age sweep, on its timer or asked for) and operators' evictions. */
final class Operators {

    private final CatalogCore core;
    private final Spills spills;

    Operators(CatalogCore core, Spills spills) {
        this.core = core;
        this.spills = spills;
    }

    ExpiryReport sweep() {
        if (core.settings.maxAge() == null) {
            return new ExpiryReport(Tier.MEMORY, false, List.of());
        }
        RecordCatalog.Removal r = core.catalog.expire(core.settings.maxAge().toNanos());
        List<RecordKey> removed = List.copyOf(new LinkedHashSet<>(r.removed()));
        if (!removed.isEmpty()) {
            core.records.metrics().expired(Tier.MEMORY, r.slots().size());
            core.records.metrics().expired(core.durableTier(), r.files().size());
            spills.apply(r, "Expired: unused for longer than max age " + Durations.human(core.settings.maxAge()));
        }
        return new ExpiryReport(Tier.MEMORY, true, removed);
    }

    EvictOutcome evict(RecordKey key) {
        RecordCatalog.Eviction e = core.catalog.evict(key);
        return switch (e.result()) {
            case NOT_FOUND -> new EvictOutcome(EvictOutcome.Result.NOT_FOUND, 0);
            case BUSY -> new EvictOutcome(EvictOutcome.Result.BUSY, 0);
            case EVICTED -> {
                int n = new HashSet<>(e.removal().removed()).size();
                spills.apply(e.removal(), "Evicted by an operator (with its descendants)");
                core.records.metrics().evictedByOperator(n);
                yield new EvictOutcome(EvictOutcome.Result.EVICTED, n);
            }
        };
    }
}
