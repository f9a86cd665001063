package dev.selene.actors.value;

import java.util.List;

/**
 * One page of the records a tier holds, ordered by namespace then key.
 *
 * @param total   records that match the filter, over all pages
 * @param offset  index of the first record of this page
 * @param records this page
 */
public record RecordPage(int total, int offset, List<RecordView> records) {

    public static RecordPage empty(int offset) {
        return new RecordPage(0, offset, List.of());
    }
}
