package dev.selene.actors.pool;

/**
 * A message that crosses the cluster between hosts and pool managers: serialized as Jackson CBOR (bound in the
 * library's reference configuration), never with Java serialization.
 */
public interface PoolMessage {
}
