package dev.selene.transport.pool;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Which peers may write and read which namespaces on a serving data plane, by the identity (CN) of the certificate
 * each presented. A rule names an identity exactly, or a prefix ending in {@code *} ({@code pool-manager-*}); its
 * namespaces are names, or {@code *} for every one. An identity that no rule names may touch nothing; the first rule
 * that names it (exact names before prefixes, longer prefixes first) decides. {@link #OPEN} lets every
 * authenticated peer touch every namespace.
 */
public final class NamespaceAccess {

    /** No rules: every peer that passed the handshake may read and write every namespace. */
    public static final NamespaceAccess OPEN = new NamespaceAccess(Map.of(), true);

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(NamespaceAccess.class);
    private static final int LOGGED_KEPT = 10_000;

    /** A refused read or write: the operation ("read" or "write"), the peer's identity, the namespace. */
    public record Denial(String operation, String identity, String namespace) {
    }

    private final Map<String, Set<String>> exact = new LinkedHashMap<>();
    private final List<java.util.function.Consumer<Denial>> listeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Set<Denial> logged = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final List<Map.Entry<String, Set<String>>> prefixes;
    private final boolean open;

    private NamespaceAccess(Map<String, ? extends java.util.Collection<String>> rules, boolean open) {
        this.open = open;
        java.util.ArrayList<Map.Entry<String, Set<String>>> p = new java.util.ArrayList<>();
        for (var e : rules.entrySet()) {
            String id = e.getKey();
            Set<String> namespaces = Set.copyOf(e.getValue());
            for (String ns : namespaces) {
                if (!ns.equals("*") && !RecordKey.isValidNamespace(ns)) {
                    throw new IllegalArgumentException("selene.manager.access.\"" + id + "\": namespace '" + ns
                            + "' is invalid; allowed: 1..128 letters, digits, '.', '_', '-', or * for every one");
                }
            }
            if (id.isEmpty() || id.indexOf('*') >= 0 && id.indexOf('*') != id.length() - 1) {
                throw new IllegalArgumentException("selene.manager.access: identity '" + id + "' is invalid; "
                        + "allowed: a certificate's CN, or a prefix ending in *");
            }
            if (id.endsWith("*")) {
                p.add(Map.entry(id.substring(0, id.length() - 1), namespaces));
            } else {
                exact.put(id, namespaces);
            }
        }
        p.sort((a, b) -> Integer.compare(b.getKey().length(), a.getKey().length()));
        this.prefixes = List.copyOf(p);
    }

    /** Rules from identity (or prefix*) to the namespaces it may read and write. */
    public static NamespaceAccess of(Map<String, ? extends java.util.Collection<String>> rules) {
        Objects.requireNonNull(rules, "rules");
        return rules.isEmpty() ? OPEN : new NamespaceAccess(rules, false);
    }

    /** Adds a listener told of every refused read and write (a metrics counter). */
    public void onDenied(java.util.function.Consumer<Denial> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** Tells the listeners, and logs the first refusal of each peer, operation and namespace. */
    private void denied(String operation, String identity, String namespace) {
        Denial d = new Denial(operation, identity, namespace);
        if (logged.size() < LOGGED_KEPT && logged.add(d)) {
            LOG.warn("refused to let '{}' {} namespace {}: no rule of selene.manager.access allows it (counted in "
                    + "selene_pool_access_refused_total; further ones are counted, not logged)", identity, operation,
                    namespace);
        }
        for (var l : listeners) {
            l.accept(d);
        }
    }

    /** Whether any rule is set (else every authenticated peer may touch every namespace). */
    public boolean restricted() {
        return !open;
    }

    /** Whether {@code identity} (null: a peer without a certificate) may read and write {@code namespace}. */
    public boolean allows(String identity, String namespace) {
        if (open) {
            return true;
        }
        if (identity == null) {
            return false;
        }
        Set<String> ns = exact.get(identity);
        if (ns == null) {
            for (var e : prefixes) {
                if (identity.startsWith(e.getKey())) {
                    ns = e.getValue();
                    break;
                }
            }
        }
        return ns != null && (ns.contains("*") || ns.contains(namespace));
    }

    /**
     * {@code store} behind these rules for one connection whose peer is {@code identity} (asked when a request
     * arrives, after the handshake): a write of a namespace the peer may not touch is refused, a read is answered
     * as not held, and {@code counted} is told with the operation ("read" or "write") and the peer.
     */
    RecordService guard(RecordService store, Supplier<String> identity, java.util.function.BiConsumer<String,
            String> counted) {
        if (open) {
            return store;
        }
        return new RecordService() {
            @Override
            public void offered(RecordSpec spec, long imageBytes, Admission admission) {
                String who = identity.get();
                if (!allows(who, spec.key().namespace())) {
                    denied("write", who, spec.key().namespace());
                    counted.accept("write", who);
                    admission.refuse("'" + who + "' may not write namespace " + spec.key().namespace());
                    return;
                }
                store.offered(spec, imageBytes, admission);
            }

            @Override
            public void requested(RecordKey key, Delivery delivery) {
                String who = identity.get();
                if (!allows(who, key.namespace())) {
                    denied("read", who, key.namespace());
                    counted.accept("read", who);
                    delivery.notHeld("'" + who + "' may not read namespace " + key.namespace());
                    return;
                }
                store.requested(key, delivery);
            }
        };
    }
}
