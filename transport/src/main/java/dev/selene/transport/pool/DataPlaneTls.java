package dev.selene.transport.pool;

import dev.selene.transport.tls.PoolTls;

import java.util.Objects;

/**
 * TLS on a data plane: the node's certificates (every connection is mutually authenticated against the pool's
 * CA), the TLS engine, and, on a serving plane, which peers may read and write which namespaces.
 *
 * @param tls    the node's certificates
 * @param engine the JDK's engine or OpenSSL's
 * @param access namespace rules by peer identity ({@link NamespaceAccess#OPEN}: none)
 */
public record DataPlaneTls(PoolTls tls, PoolTls.Engine engine, NamespaceAccess access) {

    public DataPlaneTls {
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(access, "access");
    }

    /** TLS without namespace rules (a host's plane, or a manager that lets every member touch every namespace). */
    public DataPlaneTls(PoolTls tls, PoolTls.Engine engine) {
        this(tls, engine, NamespaceAccess.OPEN);
    }
}
