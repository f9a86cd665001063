package dev.selene.actors.value;

import dev.selene.engine.key.RecordKey;

import java.util.List;

/**
 * What the node knows about one record: its state, where it lives and its chain (root first, ending at the
 * record), as the admin API describes it.
 *
 * @param key       the record
 * @param state     {@code resident}, {@code on_disk}, {@code in_pool} (retired to the pool, on a node whose only
 *                  durable tier it is), {@code in_flight} (a publication is copying it) or {@code absent}
 * @param record    the record itself when resident, else null
 * @param chain     the resident ancestors and the record, root first; {@code complete} says whether it reaches a
 *                  root
 * @param complete  whether every ancestor is present, so the record can be matched
 */
public record RecordDescription(RecordKey key, String state, RecordView record, List<RecordView> chain,
                                boolean complete) {

    public static RecordDescription absent(RecordKey key) {
        return new RecordDescription(key, "absent", null, List.of(), false);
    }

    public boolean found() {
        return !state.equals("absent");
    }
}
