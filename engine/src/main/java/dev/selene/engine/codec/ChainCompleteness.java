package dev.selene.engine.codec;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Finds the records whose chain is incomplete: some ancestor is missing, so the record can never be restored and a
 * recovering tier deletes it (recovery).
 */
public final class ChainCompleteness {

    private ChainCompleteness() {
    }

    /** Keys of {@code specs} whose chain, within {@code specs}, does not reach a root. */
    public static Set<RecordKey> incomplete(Collection<RecordSpec> specs) {
        return incomplete(specs, key -> false);
    }

    /**
     * Keys of {@code specs} whose chain does not reach a root, where a parent outside {@code specs} counts as
     * present when {@code completeElsewhere} says its own chain is complete in another tier. A cycle (only possible
     * with forged files) is incomplete. Iterative: chains of any depth.
     */
    public static Set<RecordKey> incomplete(Collection<RecordSpec> specs, Predicate<RecordKey> completeElsewhere) {
        Map<RecordKey, RecordSpec> byKey = new HashMap<>();
        for (RecordSpec spec : specs) {
            byKey.put(spec.key(), spec);
        }
        Map<RecordKey, Boolean> complete = new HashMap<>();
        List<RecordKey> path = new ArrayList<>();
        Set<RecordKey> onPath = new HashSet<>();
        for (RecordSpec start : byKey.values()) {
            path.clear();
            onPath.clear();
            RecordSpec current = start;
            boolean result;
            while (true) {
                Boolean known = complete.get(current.key());
                if (known != null) {
                    result = known;
                    break;
                }
                path.add(current.key());
                onPath.add(current.key());
                RecordKey parent = current.parent();
                if (parent == null) {
                    result = true;
                    break;
                }
                RecordSpec parentSpec = byKey.get(parent);
                if (parentSpec == null) {
                    result = completeElsewhere.test(parent);
                    break;
                }
                if (onPath.contains(parent)) {
                    result = false;
                    break;
                }
                current = parentSpec;
            }
            for (RecordKey key : path) {
                complete.put(key, result);
            }
        }
        Set<RecordKey> incomplete = new HashSet<>();
        complete.forEach((key, ok) -> {
            if (!ok) {
                incomplete.add(key);
            }
        });
        return incomplete;
    }
}
