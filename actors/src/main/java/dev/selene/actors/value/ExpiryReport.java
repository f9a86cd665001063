package dev.selene.actors.value;

import dev.selene.engine.key.RecordKey;

import java.util.List;

/**
 * What one max-age sweep removed from a tier.
 *
 * @param tier    the tier swept
 * @param enabled whether max age is set; when off nothing is ever removed
 * @param removed keys removed, descendants before their ancestors
 */
public record ExpiryReport(Tier tier, boolean enabled, List<RecordKey> removed) {
}
